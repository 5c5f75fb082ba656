//! Gap locks (InnoDB's gap and next-key locks, in the form a locking scan needs) and the
//! insert-intention check that makes inserts respect them.
//!
//! A gap lock covers a key range of one column family, whether or not keys exist there. Gap
//! locks never conflict with each other (shared or exclusive, as in InnoDB): they only make
//! *inserts* of other transactions wait. An insert of a new key first calls
//! [`LockManager::insert_intention`](crate::LockManager::insert_intention), which waits
//! (with the transaction's lock timeout and deadlock detection through the same wait-for
//! graph as row locks) while another transaction holds a gap lock covering the key.
//!
//! # Reserved and held parts
//!
//! A scan does not know in advance how far it will go, and reads the newest committed data
//! as it goes. So a scan first *reserves* its whole possible range
//! ([`LockManager::reserve_gap`](crate::LockManager::reserve_gap)) before it reads anything,
//! then *holds* the part it has walked
//! ([`LockManager::extend_gap`](crate::LockManager::extend_gap)), and when it is done
//! drops the part it never reached
//! ([`LockManager::finish_gap`](crate::LockManager::finish_gap)). An insert by another
//! transaction into the held part waits; an insert into the reserved part ahead of the scan
//! goes ahead at once but is recorded as an *intruder*, and the scan gets the intruders back
//! when it extends its held part over them: it then waits for their row locks and reads
//! again, so it never misses a row inserted ahead of it (InnoDB's scan meets such a row in the
//! page and waits for its implicit lock). Both steps run under one mutex, so an insert either
//! is recorded before the scan holds its key, or waits.
//!
//! # Cost
//!
//! The table is one mutex-protected map, scanned linearly by every insert-intention check;
//! an atomic count of entries lets inserts skip it entirely while no gap lock exists (one
//! atomic load per insert). A scan holds one entry, however many rows it walks.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use riptide_common::{CfId, Error, ErrorKind, Result};

use crate::interrupt::Interrupt;
use crate::key_fmt::{KeyFmt, TxnsFmt};
use crate::lock_manager::TxnId;
use crate::lock_table::{LockInfo, LockKind, LockTable};
use crate::wait_for::{DeadlockFound, WaitForGraph};
use crate::wait_observer::ObserverSlot;

/// What an insert-intention wait works with besides the gap table: the deadlock detector
/// (when on), the lock manager's wait observer, and the flag that may end it early.
pub(crate) struct IntentionWait<'a> {
    pub(crate) graph: Option<&'a WaitForGraph>,
    pub(crate) observer: &'a ObserverSlot,
    pub(crate) interrupt: Option<&'a Interrupt>,
}

/// The id of one gap lock, unique within its lock manager.
pub type GapLockId = u64;

/// A key range: a lower and an upper bound.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Range {
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
}

impl Range {
    fn new(start: Bound<&[u8]>, end: Bound<&[u8]>) -> Range {
        Range {
            start: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        let above = match &self.start {
            Bound::Unbounded => true,
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
        };
        let below = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
        };
        above && below
    }

    /// Whether the range holds no key at all.
    fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e))
            | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
            _ => false,
        }
    }

    /// The smallest range holding both.
    fn hull(&self, other: &Range) -> Range {
        Range {
            start: if lower_le(&self.start, &other.start) {
                self.start.clone()
            } else {
                other.start.clone()
            },
            end: if upper_le(&self.end, &other.end) {
                other.end.clone()
            } else {
                self.end.clone()
            },
        }
    }

    /// The keys in both.
    fn intersect(&self, other: &Range) -> Range {
        Range {
            start: if lower_le(&self.start, &other.start) {
                other.start.clone()
            } else {
                self.start.clone()
            },
            end: if upper_le(&self.end, &other.end) {
                self.end.clone()
            } else {
                other.end.clone()
            },
        }
    }
}

/// Whether lower bound `a` admits every key `b` admits (`a` is at or below `b`).
fn lower_le(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> bool {
    match (a, b) {
        (Bound::Unbounded, _) => true,
        (_, Bound::Unbounded) => false,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x <= y
        }
        (Bound::Included(x), Bound::Excluded(y)) => x <= y,
        (Bound::Excluded(x), Bound::Included(y)) => x < y,
    }
}

/// Whether upper bound `a` is at or below upper bound `b` (`b` admits every key `a` admits).
fn upper_le(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> bool {
    match (a, b) {
        (_, Bound::Unbounded) => true,
        (Bound::Unbounded, _) => false,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            x <= y
        }
        (Bound::Excluded(x), Bound::Included(y)) => x <= y,
        (Bound::Included(x), Bound::Excluded(y)) => x < y,
    }
}

/// One gap lock.
#[derive(Debug)]
struct Gap {
    txn: TxnId,
    cf: CfId,
    /// Where inserts of other transactions are recorded (the scan may still get there).
    reserved: Range,
    /// Where inserts of other transactions wait. Always inside `reserved`.
    held: Option<Range>,
    /// Keys other transactions inserted into the reserved, not held part, with who did.
    intruders: Vec<(Vec<u8>, TxnId)>,
}

#[derive(Debug, Default)]
struct GapState {
    next_id: GapLockId,
    gaps: HashMap<GapLockId, Gap>,
    waits: u64,
    wait_time: Duration,
    timeouts: u64,
    deadlocks: u64,
    interrupts: u64,
    /// Insert intentions waiting now.
    waiting: u64,
    /// Who those are (transaction, column family, key, since when), for
    /// [`GapTable::fill_lock_table`].
    intentions: Vec<(TxnId, CfId, Vec<u8>, Instant)>,
}

impl GapState {
    /// The transactions whose held gap locks cover `key` (sorted, unique, never `txn`);
    /// records `txn` as an intruder in the reserved parts it enters.
    fn check(&mut self, txn: TxnId, cf: CfId, key: &[u8]) -> Vec<TxnId> {
        let mut blockers = Vec::new();
        for gap in self.gaps.values_mut() {
            if gap.txn == txn || gap.cf != cf || !gap.reserved.contains(key) {
                continue;
            }
            if gap.held.as_ref().is_some_and(|h| h.contains(key)) {
                blockers.push(gap.txn);
            } else if !gap
                .intruders
                .iter()
                .any(|(k, t)| *t == txn && k.as_slice() == key)
            {
                gap.intruders.push((key.to_vec(), txn));
            }
        }
        blockers.sort_unstable();
        blockers.dedup();
        blockers
    }
}

/// The gap-lock table of a [`LockManager`](crate::LockManager).
#[derive(Debug, Default)]
pub(crate) struct GapTable {
    state: Mutex<GapState>,
    released: Condvar,
    /// `state.gaps.len()`, readable without the mutex.
    count: AtomicUsize,
}

/// Gap-lock counters, summed into [`crate::LockManagerStats`].
pub(crate) struct GapCounters {
    pub(crate) held: u64,
    pub(crate) waits: u64,
    pub(crate) wait_time: Duration,
    pub(crate) timeouts: u64,
    pub(crate) deadlocks: u64,
    pub(crate) interrupts: u64,
    pub(crate) waiting: u64,
}

impl GapTable {
    pub(crate) fn any(&self) -> bool {
        // SeqCst: paired with the writes an inserter made before this load (see the
        // `riptide` transaction module: a scan either sees the insert or the insert sees the
        // gap lock).
        self.count.load(Ordering::SeqCst) > 0
    }

    fn add(&self, gap: Gap) -> GapLockId {
        let mut st = self.state.lock();
        let id = st.next_id;
        st.next_id += 1;
        st.gaps.insert(id, gap);
        self.count.store(st.gaps.len(), Ordering::SeqCst);
        id
    }

    pub(crate) fn lock(
        &self,
        txn: TxnId,
        cf: CfId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> GapLockId {
        let range = Range::new(start, end);
        self.add(Gap {
            txn,
            cf,
            held: Some(range.clone()),
            reserved: range,
            intruders: Vec::new(),
        })
    }

    pub(crate) fn reserve(
        &self,
        txn: TxnId,
        cf: CfId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> GapLockId {
        self.add(Gap {
            txn,
            cf,
            reserved: Range::new(start, end),
            held: None,
            intruders: Vec::new(),
        })
    }

    pub(crate) fn extend(
        &self,
        id: GapLockId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> Vec<(Vec<u8>, TxnId)> {
        let mut st = self.state.lock();
        let Some(gap) = st.gaps.get_mut(&id) else {
            return Vec::new();
        };
        let walked = Range::new(start, end).intersect(&gap.reserved);
        if walked.is_empty() {
            return Vec::new();
        }
        let held = match gap.held.take() {
            Some(h) => h.hull(&walked),
            None => walked,
        };
        let (inside, outside): (Vec<_>, Vec<_>) = std::mem::take(&mut gap.intruders)
            .into_iter()
            .partition(|(k, _)| held.contains(k));
        gap.intruders = outside;
        gap.held = Some(held);
        inside
    }

    pub(crate) fn finish(&self, id: GapLockId) {
        let mut st = self.state.lock();
        let Some(gap) = st.gaps.get_mut(&id) else {
            return;
        };
        gap.intruders.clear();
        match gap.held.clone() {
            Some(held) => gap.reserved = held,
            None => {
                st.gaps.remove(&id);
                self.count.store(st.gaps.len(), Ordering::SeqCst);
            }
        }
        drop(st);
        self.released.notify_all();
    }

    pub(crate) fn unlock_all(&self, txn: TxnId) -> usize {
        let mut st = self.state.lock();
        let before = st.gaps.len();
        st.gaps.retain(|_, g| g.txn != txn);
        let removed = before - st.gaps.len();
        self.count.store(st.gaps.len(), Ordering::SeqCst);
        drop(st);
        if removed > 0 {
            self.released.notify_all();
        }
        removed
    }

    pub(crate) fn holders(&self, cf: CfId, key: &[u8]) -> Vec<TxnId> {
        let st = self.state.lock();
        let mut out: Vec<TxnId> = st
            .gaps
            .values()
            .filter(|g| g.cf == cf && g.held.as_ref().is_some_and(|h| h.contains(key)))
            .map(|g| g.txn)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(crate) fn counters(&self) -> GapCounters {
        let st = self.state.lock();
        GapCounters {
            held: st.gaps.len() as u64,
            waits: st.waits,
            wait_time: st.wait_time,
            timeouts: st.timeouts,
            deadlocks: st.deadlocks,
            interrupts: st.interrupts,
            waiting: st.waiting,
        }
    }

    /// Wakes every waiting insert intention so it looks at its interrupt flag again (see
    /// [`crate::interrupt`]: the mutex is taken so the flag, raised before, is seen).
    pub(crate) fn wake_all(&self) {
        drop(self.state.lock());
        self.released.notify_all();
    }

    pub(crate) fn insert_intention(
        &self,
        wait: IntentionWait<'_>,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        timeout: Duration,
    ) -> Result<()> {
        let IntentionWait {
            graph,
            observer,
            interrupt,
        } = wait;
        if !self.any() {
            return Ok(());
        }
        let mut st = self.state.lock();
        let mut blockers = st.check(txn, cf, key);
        if blockers.is_empty() {
            return Ok(());
        }
        if interrupt.is_some_and(Interrupt::is_set) {
            st.interrupts += 1;
            return Err(Error::new(
                ErrorKind::Interrupted,
                format!(
                    "insert wait interrupted before it began: txn {txn} inserts {} into a gap \
                     locked by {}",
                    KeyFmt { cf, key },
                    TxnsFmt(&blockers)
                ),
            ));
        }
        if timeout.is_zero() {
            st.timeouts += 1;
            return Err(Error::new(
                ErrorKind::TimedOut,
                format!(
                    "insert not possible without waiting (timeout 0): txn {txn} inserts {} \
                     into a gap locked by {}",
                    KeyFmt { cf, key },
                    TxnsFmt(&blockers)
                ),
            ));
        }
        let started = Instant::now();
        let deadline = started.checked_add(timeout);
        st.waits += 1;
        st.waiting += 1;
        st.intentions.push((txn, cf, key.to_vec(), started));
        let mut recorded: Vec<TxnId> = Vec::new();
        let mut reporter = observer.reporter();
        let outcome = loop {
            if let Some(graph) = graph
                && blockers != recorded
            {
                let wants = || format!("an insert into a locked gap at {}", KeyFmt { cf, key });
                match graph.wait(txn, &blockers, wants) {
                    Ok(()) => recorded.clone_from(&blockers),
                    Err(deadlock) => {
                        // The graph already dropped the victim's edges.
                        recorded.clear();
                        st.deadlocks += 1;
                        break Err(deadlock_error(txn, cf, key, deadlock));
                    }
                }
            }
            reporter.report(txn, &blockers);
            let timed_out = match deadline {
                Some(deadline) => self.released.wait_until(&mut st, deadline).timed_out(),
                None => {
                    self.released.wait(&mut st);
                    false
                }
            };
            blockers = st.check(txn, cf, key);
            if blockers.is_empty() {
                break Ok(());
            }
            if interrupt.is_some_and(Interrupt::is_set) {
                st.interrupts += 1;
                break Err(Error::new(
                    ErrorKind::Interrupted,
                    format!(
                        "insert wait interrupted after {}ms (limit {}ms): txn {txn} inserts {} \
                         into a gap locked by {}",
                        started.elapsed().as_millis(),
                        timeout.as_millis(),
                        KeyFmt { cf, key },
                        TxnsFmt(&blockers)
                    ),
                ));
            }
            if timed_out || deadline.is_some_and(|d| Instant::now() >= d) {
                st.timeouts += 1;
                break Err(Error::new(
                    ErrorKind::TimedOut,
                    format!(
                        "lock wait timeout after {}ms (limit {}ms): txn {txn} inserts {} into \
                         a gap locked by {}",
                        started.elapsed().as_millis(),
                        timeout.as_millis(),
                        KeyFmt { cf, key },
                        TxnsFmt(&blockers)
                    ),
                ));
            }
        };
        if !recorded.is_empty()
            && let Some(graph) = graph
        {
            graph.remove(txn);
        }
        st.wait_time += started.elapsed();
        st.waiting = st.waiting.saturating_sub(1);
        if let Some(i) = st
            .intentions
            .iter()
            .position(|(t, c, k, _)| *t == txn && *c == cf && k.as_slice() == key)
        {
            st.intentions.swap_remove(i);
        }
        outcome
    }

    /// Adds the held parts of the gap locks and the waiting insert intentions to `table`,
    /// up to `limit` rows in all.
    pub(crate) fn fill_lock_table(&self, table: &mut LockTable, limit: usize) {
        let st = self.state.lock();
        for gap in st.gaps.values() {
            let Some(held) = &gap.held else { continue };
            let info = LockInfo {
                txn: gap.txn,
                cf: gap.cf,
                kind: LockKind::Gap,
                start: held.start.clone(),
                end: held.end.clone(),
                waiting: None,
                blocked_by: Vec::new(),
            };
            if table.push(info, limit) {
                return;
            }
        }
        for (txn, cf, key, since) in &st.intentions {
            let mut blocked_by: Vec<TxnId> = st
                .gaps
                .values()
                .filter(|g| {
                    g.txn != *txn && g.cf == *cf && g.held.as_ref().is_some_and(|h| h.contains(key))
                })
                .map(|g| g.txn)
                .collect();
            blocked_by.sort_unstable();
            blocked_by.dedup();
            let info = LockInfo {
                txn: *txn,
                cf: *cf,
                kind: LockKind::InsertIntention,
                start: Bound::Included(key.clone()),
                end: Bound::Included(key.clone()),
                waiting: Some(since.elapsed()),
                blocked_by,
            };
            if table.push(info, limit) {
                return;
            }
        }
    }
}

fn deadlock_error(txn: TxnId, cf: CfId, key: &[u8], deadlock: DeadlockFound) -> Error {
    let what = format!(
        "txn {txn} inserts {} into a gap locked by another transaction",
        KeyFmt { cf, key }
    );
    deadlock.into_error(txn, &what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: Bound<&[u8]>, end: Bound<&[u8]>) -> Range {
        Range::new(start, end)
    }

    #[test]
    fn ranges_contain_hull_and_intersect() {
        let a = r(Bound::Included(b"b"), Bound::Excluded(b"d"));
        assert!(a.contains(b"b") && a.contains(b"c") && !a.contains(b"d") && !a.contains(b"a"));
        let b = r(Bound::Excluded(b"c"), Bound::Included(b"f"));
        let h = a.hull(&b);
        assert_eq!(h, r(Bound::Included(b"b"), Bound::Included(b"f")));
        let i = a.intersect(&b);
        assert_eq!(i, r(Bound::Excluded(b"c"), Bound::Excluded(b"d")));
        assert!(!i.contains(b"c") && !i.contains(b"d") && i.contains(b"c\0"));
        assert!(r(Bound::Included(b"c"), Bound::Excluded(b"c")).is_empty());
        assert!(!r(Bound::Included(b"c"), Bound::Included(b"c")).is_empty());
        let all = r(Bound::Unbounded, Bound::Unbounded);
        assert_eq!(all.intersect(&a), a);
        assert_eq!(all.hull(&a), all);
    }
}
