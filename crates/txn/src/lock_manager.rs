//! Row locks for pessimistic transactions: shared and exclusive locks on `(column family, key)`,
//! striped so that unrelated keys never contend, with wait timeouts and deadlock detection.
//!
//! The lock table does not know or care whether a key exists in the database: locking a key
//! nobody has written yet is how two inserts of the same new primary key serialize.
//!
//! # Policies
//!
//! - **Re-entrancy.** A transaction that already holds a mode at least as strong as the one it
//!   asks for is granted at once. Locks are not counted: one [`LockManager::unlock`] releases the
//!   key whatever the number of [`LockManager::lock`] calls.
//! - **Upgrade.** A shared holder asking for exclusive is upgraded when it is the only holder;
//!   otherwise it waits like any other request. Two shared holders that both try to upgrade wait
//!   for each other, which deadlock detection reports.
//! - **Fairness.** While an exclusive request (including an upgrade) is waiting on a key, new
//!   shared requests from transactions that do not hold the key wait behind it, so a stream of
//!   readers cannot starve a writer. Exclusive requests are not queued among themselves: when the
//!   key frees up, whichever waiter runs first wins.
//! - **Deadlocks.** See [`LockManagerOptions::deadlock_detect`]: the requester that would close
//!   a cycle is the victim, and a wait-for chain longer than
//!   [`LockManagerOptions::max_deadlock_depth`] counts as a deadlock (InnoDB does the same).
//! - **Waking.** Each stripe has one condition variable; a release wakes every waiter of that
//!   stripe, and each re-checks its own key.
//! - **Gap locks.** Key ranges, next to the row locks: see [`crate::gap_locks`] and
//!   [`LockManager::insert_intention`]. They share the wait-for graph, so a cycle through a
//!   row lock and a gap lock is a deadlock too.
//! - **Interrupts.** A wait given an [`Interrupt`] ends with [`ErrorKind::Interrupted`] soon
//!   after another thread calls [`LockManager::interrupt`] on it (see [`crate::interrupt`]);
//!   like a timeout, the requester keeps what it held before.
//! - **No waiting at all.** [`LockManager::try_lock`] grants or reports a conflict at once
//!   (`SKIP LOCKED`).

use std::fmt;
use std::ops::Bound;
use std::time::{Duration, Instant};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry as TableEntry;
use parking_lot::{Condvar, Mutex};
use riptide_common::{CfId, Error, ErrorKind, Result};

use crate::gap_locks::{GapLockId, GapTable};
use crate::interrupt::Interrupt;
use crate::key_fmt::{KeyFmt, TxnsFmt};
use crate::lock_table::{LockInfo, LockKind, LockTable};
use crate::wait_for::{DeadlockFound, WaitForGraph};
use crate::wait_observer::{ObserverSlot, WaitObserver};

/// The id of a transaction, as the lock manager sees it. Unique among live transactions.
pub type TxnId = u64;

/// The strength of a row lock. `Shared < Exclusive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    /// Many transactions may hold a shared lock on the same key at once (`SELECT ... LOCK IN
    /// SHARE MODE`).
    Shared,
    /// Only one transaction may hold an exclusive lock, and no one else any lock (writes,
    /// `SELECT ... FOR UPDATE`).
    Exclusive,
}

impl LockMode {
    /// `"shared"` or `"exclusive"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LockMode::Shared => "shared",
            LockMode::Exclusive => "exclusive",
        }
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An owned lock target: a column family and a user key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockKey {
    cf: CfId,
    key: Vec<u8>,
}

impl LockKey {
    /// The lock target `key` in column family `cf`.
    pub fn new(cf: CfId, key: &[u8]) -> Self {
        LockKey {
            cf,
            key: key.to_vec(),
        }
    }

    /// The column family.
    pub fn cf(&self) -> CfId {
        self.cf
    }

    /// The user key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

impl fmt::Display for LockKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        KeyFmt {
            cf: self.cf,
            key: &self.key,
        }
        .fmt(f)
    }
}

/// Settings of a [`LockManager`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockManagerOptions {
    /// How many independently locked partitions the lock table has; keys are spread over them
    /// by hash. More stripes mean less contention and more memory. `0` is treated as `1`.
    /// Default `64` (RocksDB: `TransactionDBOptions::num_stripes`, default 16).
    pub num_stripes: usize,
    /// Whether a request that has to wait first checks that waiting would not close a cycle of
    /// transactions waiting for each other. If it would, the *requester* is the victim: its
    /// request fails with [`ErrorKind::Deadlock`] and it keeps the locks it already holds (its
    /// owner is expected to roll back). When off, deadlocked transactions wait until their lock
    /// timeout. Default `true` (RocksDB: `TransactionOptions::deadlock_detect`, default false;
    /// MyRocks turns it on with `rocksdb_deadlock_detect`).
    pub deadlock_detect: bool,
    /// The longest wait-for chain (in transactions, the requester included) the deadlock search
    /// follows. A longer chain is reported as a deadlock, as InnoDB does, so a pathological
    /// graph cannot make every lock wait expensive. Values below `2` are treated as `2`.
    /// Default `100` (RocksDB: `TransactionOptions::deadlock_detect_depth`, default 50).
    pub max_deadlock_depth: usize,
}

impl Default for LockManagerOptions {
    fn default() -> Self {
        LockManagerOptions {
            num_stripes: 64,
            deadlock_detect: true,
            max_deadlock_depth: 100,
        }
    }
}

/// Counters of a [`LockManager`] since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockManagerStats {
    /// Successful [`LockManager::lock`] calls, re-entrant ones included.
    pub granted: u64,
    /// Requests that could not be granted at once and waited (zero-timeout failures
    /// excluded), insert-intention checks that waited for a gap lock included.
    pub waits: u64,
    /// Total time spent waiting, whatever the outcome of the wait.
    pub wait_time: Duration,
    /// Requests that failed with [`ErrorKind::TimedOut`] (zero-timeout failures included).
    pub timeouts: u64,
    /// Requests that failed with [`ErrorKind::Deadlock`].
    pub deadlocks: u64,
    /// Keys currently locked by at least one transaction.
    pub locked_keys: u64,
    /// Gap locks currently held or reserved (see [`LockManager::reserve_gap`]).
    pub gap_locks: u64,
    /// Of [`LockManagerStats::waits`], the insert-intention checks that waited for a gap lock.
    pub insert_waits: u64,
    /// Requests (row locks and insert intentions) whose wait an [`Interrupt`] ended, with
    /// [`ErrorKind::Interrupted`].
    pub interrupts: u64,
    /// Requests (row locks and insert intentions) waiting now.
    pub waiting: u64,
}

/// The holders of one key: either one exclusive holder or any number of shared ones. The
/// first holder is stored inline, so the common case (one holder) allocates nothing.
#[derive(Debug, Default, Clone)]
struct Holders {
    first: Option<(TxnId, LockMode)>,
    /// Holders after the first; empty whenever `first` is `None`.
    more: Vec<(TxnId, LockMode)>,
}

impl Holders {
    fn one(txn: TxnId, mode: LockMode) -> Self {
        Holders {
            first: Some((txn, mode)),
            more: Vec::new(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(TxnId, LockMode)> {
        self.first.iter().chain(self.more.iter())
    }

    fn mode_mut(&mut self, txn: TxnId) -> Option<&mut LockMode> {
        match &mut self.first {
            Some((t, m)) if *t == txn => Some(m),
            _ => self
                .more
                .iter_mut()
                .find(|(t, _)| *t == txn)
                .map(|(_, m)| m),
        }
    }

    fn push(&mut self, txn: TxnId, mode: LockMode) {
        if self.first.is_none() {
            self.first = Some((txn, mode));
        } else {
            self.more.push((txn, mode));
        }
    }

    /// Removes `txn`; returns whether it was a holder.
    fn remove(&mut self, txn: TxnId) -> bool {
        if self.first.is_some_and(|(t, _)| t == txn) {
            self.first = self.more.pop();
            return true;
        }
        match self.more.iter().position(|&(t, _)| t == txn) {
            Some(i) => {
                self.more.swap_remove(i);
                true
            }
            None => false,
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    fn to_vec(&self) -> Vec<(TxnId, LockMode)> {
        self.iter().copied().collect()
    }
}

/// The lock table entry of one key.
#[derive(Debug)]
struct LockEntry {
    /// [`key_hash`] of (`cf`, `key`), kept for rehashing and a cheap comparison.
    hash: u64,
    cf: CfId,
    key: Box<[u8]>,
    /// Who holds the key, in which mode.
    holders: Holders,
    /// Transactions waiting for an exclusive lock (upgrades included), which new shared
    /// requests queue behind.
    exclusive_waiters: Vec<TxnId>,
}

impl LockEntry {
    /// Grants `mode` to `txn` if compatible; otherwise returns the transactions it must wait
    /// for (sorted, unique, never `txn` itself).
    fn try_acquire(&mut self, txn: TxnId, mode: LockMode) -> std::result::Result<(), Vec<TxnId>> {
        let held = self.holders.mode_mut(txn).map(|m| *m);
        if held.is_some_and(|m| m >= mode) {
            return Ok(());
        }
        let blockers = self.blockers_of(txn, mode);
        if blockers.is_empty() {
            match self.holders.mode_mut(txn) {
                Some(slot) => *slot = mode,
                None => self.holders.push(txn, mode),
            }
            return Ok(());
        }
        Err(blockers)
    }

    /// The transactions a request of `txn` in `mode` must wait for (sorted, unique, never
    /// `txn`): other holders for an exclusive request; exclusive holders and queued
    /// exclusive requests for a shared one.
    fn blockers_of(&self, txn: TxnId, mode: LockMode) -> Vec<TxnId> {
        let mut blockers: Vec<TxnId> = match mode {
            LockMode::Shared => self
                .holders
                .iter()
                .filter(|&&(t, m)| m == LockMode::Exclusive && t != txn)
                .map(|&(t, _)| t)
                .chain(self.exclusive_waiters.iter().copied().filter(|&t| t != txn))
                .collect(),
            LockMode::Exclusive => self
                .holders
                .iter()
                .filter(|&&(t, _)| t != txn)
                .map(|&(t, _)| t)
                .collect(),
        };
        blockers.sort_unstable();
        blockers.dedup();
        blockers
    }

    fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.exclusive_waiters.is_empty()
    }
}

/// The hash of a lock target: xxh3 of the key, seeded with the column family. Computed once
/// per request; it picks the stripe and the slot in the stripe's table.
fn key_hash(cf: CfId, key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(key, u64::from(cf))
}

/// A lock target with its hash.
#[derive(Debug, Clone, Copy)]
struct Target<'a> {
    hash: u64,
    cf: CfId,
    key: &'a [u8],
}

impl<'a> Target<'a> {
    fn new(cf: CfId, key: &'a [u8]) -> Self {
        Target {
            hash: key_hash(cf, key),
            cf,
            key,
        }
    }

    fn matches(&self, e: &LockEntry) -> bool {
        e.hash == self.hash && e.cf == self.cf && *e.key == *self.key
    }
}

/// Counters kept per stripe, under the stripe mutex (no shared atomics on the fast path).
#[derive(Debug, Default)]
struct Counters {
    granted: u64,
    waits: u64,
    wait_time: Duration,
    timeouts: u64,
    deadlocks: u64,
    interrupts: u64,
    /// Requests waiting now (from the start of a wait to [`LockManager::finish_wait`]).
    waiting: u64,
}

/// How many keys [`LockManager::unlock_all`] sorts by stripe at a time.
const UNLOCK_CHUNK: usize = 4096;

/// Below this many slots a stripe's table is never shrunk.
const MIN_SHRINK_CAPACITY: usize = 1024;

/// One partition of the lock table: one hash table of the locked keys, addressed with the
/// key's [`key_hash`]. The table gives memory back once it is less than an eighth full
/// (after a big transaction released its locks), so a stripe holds about its current
/// number of locked keys, not its peak.
#[derive(Debug, Default)]
struct StripeState {
    keys: HashTable<LockEntry>,
    counters: Counters,
    /// The requests of this stripe waiting now, for [`LockManager::lock_table`]: added when
    /// a request starts to wait, removed when its wait ends.
    waiters: Vec<Waiter>,
}

/// A request waiting in a stripe (see [`StripeState::waiters`]).
#[derive(Debug)]
struct Waiter {
    txn: TxnId,
    cf: CfId,
    key: Box<[u8]>,
    mode: LockMode,
    since: Instant,
}

impl StripeState {
    fn try_acquire(
        &mut self,
        txn: TxnId,
        t: Target<'_>,
        mode: LockMode,
    ) -> std::result::Result<(), Vec<TxnId>> {
        match self.keys.entry(t.hash, |e| t.matches(e), |e| e.hash) {
            TableEntry::Occupied(mut o) => o.get_mut().try_acquire(txn, mode),
            TableEntry::Vacant(v) => {
                v.insert(LockEntry {
                    hash: t.hash,
                    cf: t.cf,
                    key: t.key.into(),
                    holders: Holders::one(txn, mode),
                    exclusive_waiters: Vec::new(),
                });
                Ok(())
            }
        }
    }

    fn entry_mut(&mut self, t: Target<'_>) -> Option<&mut LockEntry> {
        self.keys.find_mut(t.hash, |e| t.matches(e))
    }

    /// Drops the entry of `t` if nobody holds or waits for it.
    fn collect(&mut self, t: Target<'_>) {
        if let Ok(o) = self.keys.find_entry(t.hash, |e| t.matches(e))
            && o.get().is_unused()
        {
            o.remove();
        }
    }

    /// Gives memory back when the table is mostly empty (see [`StripeState`]).
    fn maybe_shrink(&mut self) {
        let capacity = self.keys.capacity();
        if capacity > MIN_SHRINK_CAPACITY && self.keys.len() < capacity / 8 {
            self.keys.shrink_to(self.keys.len() * 2, |e| e.hash);
        }
    }

    /// Says who `blockers` are: `held by txn 1 (shared)`, plus `queued behind exclusive
    /// request of txn 2` for blockers that wait rather than hold.
    fn describe_blockers(&mut self, t: Target<'_>, blockers: &[TxnId]) -> String {
        let holders: Vec<(TxnId, LockMode)> = self
            .entry_mut(t)
            .map(|e| e.holders.to_vec())
            .unwrap_or_default();
        let held: Vec<TxnId> = blockers
            .iter()
            .copied()
            .filter(|b| holders.iter().any(|&(t, _)| t == *b))
            .collect();
        let queued: Vec<TxnId> = blockers
            .iter()
            .copied()
            .filter(|b| !held.contains(b))
            .collect();
        let mut out = String::new();
        if !held.is_empty() {
            let mode = if holders.iter().any(|&(_, m)| m == LockMode::Exclusive) {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            };
            out = format!("held by {} ({mode})", TxnsFmt(&held));
        }
        if !queued.is_empty() {
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str(&format!(
                "queued behind the exclusive request of {}",
                TxnsFmt(&queued)
            ));
        }
        out
    }

    /// Removes `txn` from the holders of `t`; returns whether it held it.
    fn release(&mut self, txn: TxnId, t: Target<'_>) -> bool {
        let Ok(mut o) = self.keys.find_entry(t.hash, |e| t.matches(e)) else {
            return false;
        };
        if !o.get_mut().holders.remove(txn) {
            return false;
        }
        if o.get().is_unused() {
            o.remove();
        }
        true
    }
}

#[derive(Debug, Default)]
struct Stripe {
    state: Mutex<StripeState>,
    released: Condvar,
}

/// The row-lock table shared by all pessimistic transactions of a database.
///
/// The lock manager does not remember which keys a transaction holds: the transaction keeps
/// that list (see [`WriteBuffer::record_lock`](crate::WriteBuffer::record_lock)) and hands it
/// to [`LockManager::unlock_all`] at commit or rollback. A transaction must not wait for two
/// locks at once (one thread per transaction at a time).
#[derive(Debug)]
pub struct LockManager {
    stripes: Box<[Stripe]>,
    /// Present when deadlock detection is on; only touched by requests that wait.
    graph: Option<WaitForGraph>,
    gaps: GapTable,
    /// Told of every wait and its blockers (see [`crate::wait_observer`]).
    observer: ObserverSlot,
}

impl Default for LockManager {
    fn default() -> Self {
        Self::new(LockManagerOptions::default())
    }
}

impl LockManager {
    /// An empty lock table with the given settings.
    pub fn new(options: LockManagerOptions) -> Self {
        let stripes = (0..options.num_stripes.max(1))
            .map(|_| Stripe::default())
            .collect();
        LockManager {
            stripes,
            graph: options
                .deadlock_detect
                .then(|| WaitForGraph::new(options.max_deadlock_depth)),
            gaps: GapTable::default(),
            observer: ObserverSlot::default(),
        }
    }

    /// Installs `observer`, called when a request (row lock or insert intention) starts to
    /// wait and whenever the set of transactions it waits for changes; `None` removes it.
    /// See [`crate::wait_observer`] for what it may do: it runs with this manager's mutex
    /// for the key held.
    pub fn set_wait_observer(&self, observer: Option<WaitObserver>) {
        self.observer.set(observer);
    }

    /// Locks `key` of column family `cf` in `mode` for `txn`, waiting up to `timeout` for
    /// conflicting holders to release it.
    ///
    /// Returns at once if `txn` already holds the key in `mode` or a stronger one. A shared
    /// holder asking for [`LockMode::Exclusive`] is upgraded once it is the only holder.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::TimedOut`] if the lock was not granted within `timeout`. A zero timeout
    ///   means "do not wait": a lock that is not grantable at once fails with `TimedOut` too
    ///   (not `Busy`), so callers handle one kind for "lock not obtained in time". A timeout too
    ///   large to represent as a deadline waits forever.
    /// - [`ErrorKind::Deadlock`] if deadlock detection is on and waiting would close a cycle of
    ///   waiting transactions, or a wait-for chain longer than the configured depth. `txn` keeps
    ///   the locks it already holds.
    ///
    /// In both cases nothing changed for `txn` on `key` (a shared holder that failed to upgrade
    /// still holds its shared lock).
    pub fn lock(
        &self,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
    ) -> Result<()> {
        self.lock_and_tell(txn, cf, key, mode, timeout).map(|_| ())
    }

    /// [`LockManager::lock`], telling whether the request had to wait (`true`: other
    /// transactions held the key meanwhile, and may have changed it before releasing it).
    pub fn lock_and_tell(
        &self,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
    ) -> Result<bool> {
        self.lock_interruptible(txn, cf, key, mode, timeout, None)
    }

    /// [`LockManager::lock_and_tell`], with a wait that `interrupt` can end: when it is raised
    /// (before the wait begins, or by [`LockManager::interrupt`] during it), a request that is
    /// not grantable at once fails with [`ErrorKind::Interrupted`] instead of waiting on, and
    /// nothing changed for `txn` on `key`. A request granted at once never looks at the flag.
    pub fn lock_interruptible(
        &self,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<bool> {
        let t = Target::new(cf, key);
        let stripe = self.stripe(t)?;
        let mut state = stripe.state.lock();
        let mut blockers = match state.try_acquire(txn, t, mode) {
            Ok(()) => {
                state.counters.granted += 1;
                return Ok(false);
            }
            Err(blockers) => blockers,
        };
        if interrupt.is_some_and(Interrupt::is_set) {
            state.counters.interrupts += 1;
            return Err(Error::new(
                ErrorKind::Interrupted,
                format!(
                    "lock wait interrupted before it began: txn {txn} wants {mode} lock on {}, {}",
                    KeyFmt { cf, key },
                    state.describe_blockers(t, &blockers)
                ),
            ));
        }
        if timeout.is_zero() {
            state.counters.timeouts += 1;
            return Err(Error::new(
                ErrorKind::TimedOut,
                format!(
                    "lock not available without waiting (timeout 0): txn {txn} wants {mode} lock \
                     on {}, {}",
                    KeyFmt { cf, key },
                    state.describe_blockers(t, &blockers)
                ),
            ));
        }

        let started = Instant::now();
        let deadline = started.checked_add(timeout);
        state.counters.waits += 1;
        state.counters.waiting += 1;
        state.waiters.push(Waiter {
            txn,
            cf,
            key: key.into(),
            mode,
            since: started,
        });
        if mode == LockMode::Exclusive
            && let Some(entry) = state.entry_mut(t)
        {
            entry.exclusive_waiters.push(txn);
        }
        let wait = Wait {
            stripe,
            txn,
            target: t,
            mode,
            started,
        };
        // The blockers last written to the wait-for graph (empty: nothing recorded).
        let mut recorded: Vec<TxnId> = Vec::new();
        let mut reporter = self.observer.reporter();
        loop {
            if let Some(graph) = &self.graph
                && blockers != recorded
            {
                let wants = || format!("{mode} lock on {}", KeyFmt { cf, key });
                match graph.wait(txn, &blockers, wants) {
                    Ok(()) => recorded.clone_from(&blockers),
                    Err(deadlock) => {
                        // Describe the blockers before leaving the queue can drop the entry.
                        let blocked_by = state.describe_blockers(t, &blockers);
                        // The graph already dropped the victim's edges.
                        self.finish_wait(&wait, &mut state, &[], false);
                        state.counters.deadlocks += 1;
                        return Err(deadlock_error(&wait, deadlock, &blocked_by));
                    }
                }
            }
            reporter.report(txn, &blockers);
            let timed_out = match deadline {
                Some(deadline) => stripe.released.wait_until(&mut state, deadline).timed_out(),
                None => {
                    stripe.released.wait(&mut state);
                    false
                }
            };
            match state.try_acquire(txn, t, mode) {
                Ok(()) => {
                    self.finish_wait(&wait, &mut state, &recorded, true);
                    state.counters.granted += 1;
                    return Ok(true);
                }
                Err(now_blocking) => blockers = now_blocking,
            }
            // Under the stripe mutex: `interrupt` raises the flag, then takes this mutex
            // before it notifies, so the flag is seen here or the wait is woken.
            if interrupt.is_some_and(Interrupt::is_set) {
                let err = Error::new(
                    ErrorKind::Interrupted,
                    format!(
                        "lock wait interrupted after {}ms (limit {}ms): txn {txn} wants {mode} \
                         lock on {}, {}",
                        started.elapsed().as_millis(),
                        timeout.as_millis(),
                        KeyFmt { cf, key },
                        state.describe_blockers(t, &blockers)
                    ),
                );
                self.finish_wait(&wait, &mut state, &recorded, false);
                state.counters.interrupts += 1;
                return Err(err);
            }
            if timed_out || deadline.is_some_and(|d| Instant::now() >= d) {
                // Describe the blockers before leaving the queue can drop the entry.
                let err = Error::new(
                    ErrorKind::TimedOut,
                    format!(
                        "lock wait timeout after {}ms (limit {}ms): txn {txn} wants {mode} lock \
                         on {}, {}",
                        started.elapsed().as_millis(),
                        timeout.as_millis(),
                        KeyFmt { cf, key },
                        state.describe_blockers(t, &blockers)
                    ),
                );
                self.finish_wait(&wait, &mut state, &recorded, false);
                state.counters.timeouts += 1;
                return Err(err);
            }
        }
    }

    /// Locks `key` of `cf` in `mode` for `txn` if that is possible without waiting: returns
    /// `true` when `txn` holds it now (granted, or already held in `mode` or stronger), and
    /// `false`, changing nothing, when another transaction holds it in a conflicting mode or
    /// (for a shared request) an exclusive request of another transaction is queued on it.
    /// Neither a timeout nor a wait is counted: this is `SKIP LOCKED`, where a locked row is
    /// not an error.
    pub fn try_lock(&self, txn: TxnId, cf: CfId, key: &[u8], mode: LockMode) -> Result<bool> {
        let t = Target::new(cf, key);
        let stripe = self.stripe(t)?;
        let mut state = stripe.state.lock();
        match state.try_acquire(txn, t, mode) {
            Ok(()) => {
                state.counters.granted += 1;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// Raises `interrupt` and wakes every waiting request (row locks and insert intentions)
    /// so that those given `interrupt` end with [`ErrorKind::Interrupted`]; the others go
    /// back to waiting. Callable from any thread; takes each stripe's mutex briefly, so it
    /// is meant for rare events (`KILL QUERY`, shutdown), not for the fast path. The flag
    /// stays raised until [`Interrupt::clear`].
    pub fn interrupt(&self, interrupt: &Interrupt) {
        interrupt.set();
        for stripe in &*self.stripes {
            // Taking the mutex orders the flag before any waiter's next look at it: a waiter
            // that checked the flag before it was raised is asleep by now and gets notified.
            drop(stripe.state.lock());
            stripe.released.notify_all();
        }
        self.gaps.wake_all();
    }

    /// Releases the lock `txn` holds on `key` of `cf` and wakes the waiters of its stripe.
    /// Returns whether `txn` held it (releasing a lock not held is a no-op).
    pub fn unlock(&self, txn: TxnId, cf: CfId, key: &[u8]) -> bool {
        let t = Target::new(cf, key);
        let Ok(stripe) = self.stripe(t) else {
            return false;
        };
        let released = {
            let mut state = stripe.state.lock();
            let released = state.release(txn, t);
            state.maybe_shrink();
            released
        };
        if released {
            stripe.released.notify_all();
        }
        released
    }

    /// Releases every lock in `keys` held by `txn` (commit or rollback). Keys `txn` does not
    /// hold are skipped. Returns how many locks were released.
    ///
    /// The keys are taken in chunks of up to 4,096, sorted by stripe: each stripe's mutex is
    /// taken once per chunk, and its waiters are woken once per chunk, not once per key
    /// (with the default 64 stripes, about 64 keys per lock of a stripe).
    pub fn unlock_all<K: AsRef<[u8]>>(
        &self,
        txn: TxnId,
        keys: impl IntoIterator<Item = (CfId, K)>,
    ) -> usize {
        let mut keys = keys.into_iter();
        let mut chunk: Vec<(usize, u64, CfId, K)> =
            Vec::with_capacity(keys.size_hint().0.clamp(1, UNLOCK_CHUNK));
        let mut released = 0;
        loop {
            chunk.extend(keys.by_ref().take(UNLOCK_CHUNK).map(|(cf, key)| {
                let hash = key_hash(cf, key.as_ref());
                (self.stripe_index(hash), hash, cf, key)
            }));
            if chunk.is_empty() {
                return released;
            }
            chunk.sort_unstable_by_key(|&(index, ..)| index);
            for run in chunk.chunk_by(|a, b| a.0 == b.0) {
                released += self.release_run(txn, run);
            }
            chunk.clear();
        }
    }

    /// Releases the keys of `run` (all of one stripe) under one lock of the stripe and wakes
    /// its waiters if anything was released.
    fn release_run<K: AsRef<[u8]>>(&self, txn: TxnId, run: &[(usize, u64, CfId, K)]) -> usize {
        let Some(stripe) = run.first().and_then(|&(index, ..)| self.stripes.get(index)) else {
            return 0;
        };
        let released = {
            let mut state = stripe.state.lock();
            let released = run
                .iter()
                .filter(|(_, hash, cf, key)| {
                    let t = Target {
                        hash: *hash,
                        cf: *cf,
                        key: key.as_ref(),
                    };
                    state.release(txn, t)
                })
                .count();
            state.maybe_shrink();
            released
        };
        if released > 0 {
            stripe.released.notify_all();
        }
        released
    }

    /// Who holds `key` of `cf` right now, in which mode (for diagnostics, like RocksDB's
    /// `GetLockStatusData`). Sorted by transaction id.
    pub fn holders(&self, cf: CfId, key: &[u8]) -> Vec<(TxnId, LockMode)> {
        let t = Target::new(cf, key);
        let Ok(stripe) = self.stripe(t) else {
            return Vec::new();
        };
        let mut holders = stripe
            .state
            .lock()
            .entry_mut(t)
            .map(|e| e.holders.to_vec())
            .unwrap_or_default();
        holders.sort_unstable();
        holders
    }

    /// Locks the key range (`start`, `end`) of `cf` for `txn` as a gap lock: until
    /// [`LockManager::unlock_gaps`], an [`LockManager::insert_intention`] of another
    /// transaction for a key in the range waits. Never waits itself: gap locks do not conflict
    /// with each other nor with row locks (InnoDB's semantics, for shared and exclusive gap
    /// locks alike).
    pub fn lock_gap(
        &self,
        txn: TxnId,
        cf: CfId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> GapLockId {
        self.gaps.lock(txn, cf, start, end)
    }

    /// Reserves the key range (`start`, `end`) of `cf` for a scan of `txn` that is about to
    /// read it: nothing is locked yet, but inserts of other transactions into the range are
    /// recorded, and handed back by [`LockManager::extend_gap`] once the scan holds their
    /// keys. Reserve before reading, so that every insert the scan's reads miss is recorded
    /// (see [`crate::gap_locks`]). Release the unwalked rest with
    /// [`LockManager::finish_gap`].
    pub fn reserve_gap(
        &self,
        txn: TxnId,
        cf: CfId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> GapLockId {
        self.gaps.reserve(txn, cf, start, end)
    }

    /// Grows the held part of gap lock `id` to the smallest range covering it and (`start`,
    /// `end`), clipped to what the lock reserved. Returns the keys other transactions
    /// inserted into the newly held part since the reservation (each with the inserter), in
    /// no particular order; they are forgotten by the lock. A gap lock that no longer exists
    /// (its transaction released it) returns nothing.
    pub fn extend_gap(
        &self,
        id: GapLockId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> Vec<(Vec<u8>, TxnId)> {
        self.gaps.extend(id, start, end)
    }

    /// Ends the reservation of gap lock `id`: it keeps what it holds (and is removed if it
    /// holds nothing), and inserts into the rest no longer concern it.
    pub fn finish_gap(&self, id: GapLockId) {
        self.gaps.finish(id);
    }

    /// Releases every gap lock of `txn` (commit or rollback; not savepoint rollback, as
    /// InnoDB) and wakes the inserts waiting for them. Returns how many there were.
    pub fn unlock_gaps(&self, txn: TxnId) -> usize {
        self.gaps.unlock_all(txn)
    }

    /// Whether any gap lock exists (held or reserved). One atomic load: inserts use it to skip
    /// the gap-lock table when it is empty.
    pub fn has_gap_locks(&self) -> bool {
        self.gaps.any()
    }

    /// The transactions whose held gap locks cover `key` of `cf`, sorted (diagnostics, tests).
    pub fn gap_holders(&self, cf: CfId, key: &[u8]) -> Vec<TxnId> {
        self.gaps.holders(cf, key)
    }

    /// InnoDB's *insert intention*: call before making a new `key` of `cf` visible to other
    /// transactions (after having written it to the transaction's own buffer, see the
    /// `riptide` transaction module for why). Waits while another transaction holds a gap lock
    /// covering `key`, up to `timeout`; records the insert in the reservations of scans that
    /// have not reached `key` yet. Costs one atomic load while no gap lock exists.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TimedOut`] and [`ErrorKind::Deadlock`] as [`LockManager::lock`] (the
    /// wait-for graph is shared with row locks).
    pub fn insert_intention(
        &self,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        timeout: Duration,
    ) -> Result<()> {
        self.insert_intention_interruptible(txn, cf, key, timeout, None)
    }

    /// [`LockManager::insert_intention`], with a wait that `interrupt` can end, as
    /// [`LockManager::lock_interruptible`]: [`ErrorKind::Interrupted`] when it is raised
    /// before or during the wait. An insert that need not wait never looks at the flag.
    pub fn insert_intention_interruptible(
        &self,
        txn: TxnId,
        cf: CfId,
        key: &[u8],
        timeout: Duration,
        interrupt: Option<&Interrupt>,
    ) -> Result<()> {
        let wait = crate::gap_locks::IntentionWait {
            graph: self.graph.as_ref(),
            observer: &self.observer,
            interrupt,
        };
        self.gaps.insert_intention(wait, txn, cf, key, timeout)
    }

    /// How many transactions are recorded as waiting in the deadlock detector (0 when
    /// detection is off). For tests and diagnostics.
    pub fn waiting_txns(&self) -> usize {
        self.graph.as_ref().map_or(0, WaitForGraph::waiting)
    }

    /// The counters summed over all stripes. Locks each stripe briefly in turn, so the result
    /// is not an atomic snapshot under concurrent use.
    pub fn stats(&self) -> LockManagerStats {
        let mut stats = LockManagerStats::default();
        for stripe in &*self.stripes {
            let state = stripe.state.lock();
            let c = &state.counters;
            stats.granted += c.granted;
            stats.waits += c.waits;
            stats.wait_time += c.wait_time;
            stats.timeouts += c.timeouts;
            stats.deadlocks += c.deadlocks;
            stats.interrupts += c.interrupts;
            stats.waiting += c.waiting;
            let locked: usize = state.keys.iter().filter(|e| !e.holders.is_empty()).count();
            stats.locked_keys += locked as u64;
        }
        let gaps = self.gaps.counters();
        stats.gap_locks = gaps.held;
        stats.insert_waits = gaps.waits;
        stats.waits += gaps.waits;
        stats.wait_time += gaps.wait_time;
        stats.timeouts += gaps.timeouts;
        stats.deadlocks += gaps.deadlocks;
        stats.interrupts += gaps.interrupts;
        stats.waiting += gaps.waiting;
        stats
    }

    /// The stripe of a key with hash `hash`. Taken from the high half of the hash times an
    /// odd constant, so that the keys of one stripe still differ in the bits the stripe's
    /// table uses (the low bits for the slot, the top seven for the tag).
    fn stripe_index(&self, hash: u64) -> usize {
        let mixed = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        // The remainder is below the stripe count, so it fits in usize.
        (mixed % self.stripes.len() as u64) as usize
    }

    fn stripe(&self, t: Target<'_>) -> Result<&Stripe> {
        let index = self.stripe_index(t.hash);
        self.stripes.get(index).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                format!(
                    "lock stripe {index} out of {} for {}",
                    self.stripes.len(),
                    KeyFmt {
                        cf: t.cf,
                        key: t.key
                    }
                ),
            )
        })
    }

    /// Leaves the waiting state: drops the exclusive-waiter mark, the graph edges (if
    /// `recorded` is not empty) and accounts the wait time.
    fn finish_wait(
        &self,
        wait: &Wait<'_>,
        state: &mut StripeState,
        recorded: &[TxnId],
        granted: bool,
    ) {
        if wait.mode == LockMode::Exclusive {
            if let Some(entry) = state.entry_mut(wait.target)
                && let Some(i) = entry.exclusive_waiters.iter().position(|&t| t == wait.txn)
            {
                entry.exclusive_waiters.swap_remove(i);
            }
            state.collect(wait.target);
            if !granted {
                // Shared requests may have been queued behind this one.
                wait.stripe.released.notify_all();
            }
        }
        if !recorded.is_empty()
            && let Some(graph) = &self.graph
        {
            graph.remove(wait.txn);
        }
        state.counters.wait_time += wait.started.elapsed();
        state.counters.waiting = state.counters.waiting.saturating_sub(1);
        if let Some(i) = state
            .waiters
            .iter()
            .position(|w| w.txn == wait.txn && w.cf == wait.target.cf && *w.key == *wait.target.key)
        {
            state.waiters.swap_remove(i);
        }
    }

    /// The locks held and the requests waiting now, at most `limit` of them (see
    /// [`crate::lock_table`]: each stripe is read under its mutex in turn, then the gap
    /// table, so the whole is not one atomic picture under concurrent use).
    pub fn lock_table(&self, limit: usize) -> LockTable {
        let mut table = LockTable::default();
        for stripe in &*self.stripes {
            let state = stripe.state.lock();
            for e in state.keys.iter() {
                for &(txn, mode) in e.holders.iter() {
                    let info = LockInfo {
                        txn,
                        cf: e.cf,
                        kind: LockKind::Row(mode),
                        start: Bound::Included(e.key.to_vec()),
                        end: Bound::Included(e.key.to_vec()),
                        waiting: None,
                        blocked_by: Vec::new(),
                    };
                    if table.push(info, limit) {
                        return table;
                    }
                }
            }
            for w in &state.waiters {
                let t = Target::new(w.cf, &w.key);
                let blocked_by = state
                    .keys
                    .find(t.hash, |e| t.matches(e))
                    .map(|e| e.blockers_of(w.txn, w.mode))
                    .unwrap_or_default();
                let info = LockInfo {
                    txn: w.txn,
                    cf: w.cf,
                    kind: LockKind::Row(w.mode),
                    start: Bound::Included(w.key.to_vec()),
                    end: Bound::Included(w.key.to_vec()),
                    waiting: Some(w.since.elapsed()),
                    blocked_by,
                };
                if table.push(info, limit) {
                    return table;
                }
            }
        }
        self.gaps.fill_lock_table(&mut table, limit);
        table
    }
}

/// A request that is waiting, for error messages and cleanup.
struct Wait<'a> {
    stripe: &'a Stripe,
    txn: TxnId,
    target: Target<'a>,
    mode: LockMode,
    started: Instant,
}

fn deadlock_error(wait: &Wait<'_>, deadlock: DeadlockFound, blocked_by: &str) -> Error {
    let what = format!(
        "txn {} wants {} lock on {}, {blocked_by}",
        wait.txn,
        wait.mode,
        KeyFmt {
            cf: wait.target.cf,
            key: wait.target.key
        }
    );
    deadlock.into_error(wait.txn, &what)
}
