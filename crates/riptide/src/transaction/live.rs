//! The open transactions of a database, for people: [`Db::transactions`](crate::Db::transactions)
//! lists them with their age, isolation level, state, write set and locks
//! (`information_schema.RIPTIDE_TRX` in MariaDB; InnoDB's `INNODB_TRX`, MyRocks'
//! `ROCKSDB_TRX`).
//!
//! Every transaction registers when it begins and leaves when it ends (commit, rollback, or
//! its handle dropped): two short critical sections per transaction on one of
//! [`LIVE_SHARDS`] mutexes chosen by its id. A listing visits the shards once and reads each
//! transaction's state under that transaction's own mutex, giving up on one that stays busy
//! (a commit writing a large batch) after [`BUSY_WAIT`]: its write set and locks are then
//! unknown (`None`), the rest is still listed.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use riptide_common::SeqNo;

use super::{Concurrency, IsolationLevel, Phase, TxnShared};

/// How many mutexes [`Live`] spreads its transactions over.
const LIVE_SHARDS: usize = 16;

/// How long a listing waits for a busy transaction's state before it reports it without
/// its write set and locks.
const BUSY_WAIT: Duration = Duration::from_millis(20);

/// Where a listed transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionState {
    /// Reading and writing.
    Active,
    /// Prepared (two-phase commit): waiting for its commit or rollback by XID.
    Prepared,
}

impl TransactionState {
    /// `ACTIVE` or `PREPARED`, as `information_schema` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionState::Active => "ACTIVE",
            TransactionState::Prepared => "PREPARED",
        }
    }
}

/// One open transaction, as [`Db::transactions`](crate::Db::transactions) lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionInfo {
    /// Its id ([`Transaction::id`](crate::Transaction::id); also its lock owner id in the
    /// lock table).
    pub id: u64,
    /// What [`TransactionOptions::owner`](crate::TransactionOptions::owner) or
    /// [`Transaction::set_owner`](crate::Transaction::set_owner) said (MariaDB: the
    /// connection id); 0 when not given.
    pub owner: u64,
    /// Its isolation level.
    pub isolation: IsolationLevel,
    /// Optimistic or pessimistic.
    pub concurrency: Concurrency,
    /// Active or prepared.
    pub state: TransactionState,
    /// Time since it began.
    pub age: Duration,
    /// The sequence number its reads see, once it took its snapshot (repeatable read and
    /// serializable); `None` before that, and under read committed.
    pub snapshot: Option<SeqNo>,
    /// Keys in its write buffer; `None` when the transaction stayed busy (see the module
    /// documentation).
    pub writes: Option<u64>,
    /// Approximate memory of its write buffer in bytes (what `max_txn_write_set_bytes`
    /// limits); `None` when busy.
    pub write_set_bytes: Option<u64>,
    /// Row locks it holds; `None` when busy.
    pub row_locks: Option<u64>,
}

/// The registry of open transactions (see the module documentation).
pub(crate) struct Live {
    shards: [Mutex<HashMap<u64, Weak<TxnShared>>>; LIVE_SHARDS],
}

impl Default for Live {
    fn default() -> Self {
        Live {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }
}

impl Live {
    fn shard(&self, id: u64) -> &Mutex<HashMap<u64, Weak<TxnShared>>> {
        // The remainder is below the shard count, so it fits in usize.
        let i = (id % LIVE_SHARDS as u64) as usize;
        // `i < LIVE_SHARDS`: always in bounds; the first shard is never used otherwise.
        self.shards.get(i).unwrap_or(&self.shards[0])
    }

    /// Adds a transaction that has just begun.
    pub(crate) fn register(&self, txn: &Arc<TxnShared>) {
        self.shard(txn.id)
            .lock()
            .insert(txn.id, Arc::downgrade(txn));
    }

    /// Removes transaction `id` (ended, or its handle dropped). Harmless if absent.
    pub(crate) fn deregister(&self, id: u64) {
        self.shard(id).lock().remove(&id);
    }

    /// The owner (see [`TransactionInfo::owner`]) of registered transaction `id`; 0 when it
    /// gave none or is not registered (ended).
    pub(crate) fn owner_of(&self, id: u64) -> u64 {
        self.shard(id)
            .lock()
            .get(&id)
            .and_then(Weak::upgrade)
            .map_or(0, |t| t.owner.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Every registered transaction that is still active or prepared, by id.
    pub(crate) fn list(&self) -> Vec<TransactionInfo> {
        let mut txns: Vec<Arc<TxnShared>> = Vec::new();
        for shard in &self.shards {
            txns.extend(shard.lock().values().filter_map(Weak::upgrade));
        }
        let now = Instant::now();
        let mut out: Vec<TransactionInfo> = txns.iter().filter_map(|t| describe(t, now)).collect();
        out.sort_by_key(|t| t.id);
        out
    }
}

/// What `txn` is now, or `None` once it has ended.
fn describe(txn: &TxnShared, now: Instant) -> Option<TransactionInfo> {
    let mut info = TransactionInfo {
        id: txn.id,
        owner: txn.owner.load(std::sync::atomic::Ordering::Relaxed),
        isolation: txn.opts.isolation,
        concurrency: txn.opts.concurrency,
        state: TransactionState::Active,
        age: now.saturating_duration_since(txn.started),
        snapshot: None,
        writes: None,
        write_set_bytes: None,
        row_locks: None,
    };
    let Some(st) = txn.state.try_lock_for(BUSY_WAIT) else {
        return Some(info);
    };
    info.state = match st.phase {
        Phase::Active => TransactionState::Active,
        Phase::Prepared(_) => TransactionState::Prepared,
        Phase::Committed | Phase::RolledBack => return None,
    };
    info.snapshot = st.snapshot.as_ref().map(|s| s.seqno());
    info.writes = Some(st.buffer.len() as u64);
    info.write_set_bytes = Some(st.buffer.approximate_bytes() as u64);
    info.row_locks = Some(st.buffer.locked_keys().count() as u64);
    Some(info)
}
