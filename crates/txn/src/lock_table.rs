//! A snapshot of the locks a [`LockManager`](crate::LockManager) holds and the requests
//! waiting in it, for people: `information_schema.RIPTIDE_LOCKS` in MariaDB (InnoDB's
//! `INNODB_LOCKS` / `INNODB_LOCK_WAITS`, MyRocks' `ROCKSDB_LOCKS`).
//!
//! [`LockManager::lock_table`](crate::LockManager::lock_table) visits each stripe under its
//! mutex in turn, then the gap table: every row is true at the moment its part was read,
//! but the whole is not one atomic picture while transactions run. Waiting requests are
//! recorded when they start to wait (the slow path only), so the cost of a lock that is
//! granted at once does not change.

use std::ops::Bound;
use std::time::Duration;

use riptide_common::CfId;

use crate::lock_manager::{LockMode, TxnId};

/// What a [`LockInfo`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// A row lock on one key, in a mode.
    Row(LockMode),
    /// A gap lock on a key range (the part a locking scan has walked): inserts of other
    /// transactions into it wait.
    Gap,
    /// An insert waiting for a gap lock of another transaction to go (always waiting).
    InsertIntention,
}

/// One lock held, or one request waiting, in a [`LockTable`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockInfo {
    /// The transaction that holds or waits.
    pub txn: TxnId,
    /// The column family of the key or range.
    pub cf: CfId,
    /// Row lock, gap lock or insert intention.
    pub kind: LockKind,
    /// The key (row locks and insert intentions: `Included(key)`), or the range's start.
    pub start: Bound<Vec<u8>>,
    /// The key again (`Included(key)`), or the range's end.
    pub end: Bound<Vec<u8>>,
    /// How long the request has been waiting; `None` for a lock that is held.
    pub waiting: Option<Duration>,
    /// For a waiting request: the transactions it waits for now (holders in a conflicting
    /// mode, exclusive requests queued ahead of a shared one, gap lock holders), sorted.
    pub blocked_by: Vec<TxnId>,
}

impl LockInfo {
    /// The key of a row lock or insert intention (the range's start for a gap lock; `None`
    /// when that start is unbounded).
    pub fn key(&self) -> Option<&[u8]> {
        match &self.start {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        }
    }
}

/// The locks of a [`LockManager`](crate::LockManager) at one moment (see the module docs),
/// held ones and waiting requests, in no particular order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockTable {
    /// At most the `limit` asked for.
    pub locks: Vec<LockInfo>,
    /// Whether more locks existed than `limit`.
    pub truncated: bool,
}

impl LockTable {
    /// Adds `info` unless the table is full; returns whether it is full now.
    pub(crate) fn push(&mut self, info: LockInfo, limit: usize) -> bool {
        if self.locks.len() >= limit {
            self.truncated = true;
            return true;
        }
        self.locks.push(info);
        false
    }
}
