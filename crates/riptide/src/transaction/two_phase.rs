//! Two-phase commit: prepared transactions in the WAL, their recovery, and finishing them by
//! xid.
//!
//! `prepare(xid)` logs the transaction's writes as one WAL record whose batch carries a
//! [`BatchMarker::Prepare`] marker: durable (per the sync mode), but not applied to the
//! memtables and given no sequence numbers. Commit logs the same writes again with a
//! [`BatchMarker::Commit`] marker and applies them like any write; rollback logs an empty batch
//! with a [`BatchMarker::Rollback`] marker.
//!
//! A prepare record must outlive the WAL segment it was written to, which is deleted once
//! its memtables are flushed. So every WAL rotation logs every outstanding prepare record
//! again at the start of the new segment (under the write lock, so no commit can slip
//! between), and recovery, which replays every live segment, ends by logging the recovered
//! ones into the fresh segment before the old segments go. Replay may therefore see a prepare
//! record several times; the last marker for an xid wins.
//!
//! After recovery, each prepared transaction's keys are locked (exclusively, by an owner id
//! of its own) until it is finished, so no other transaction can change a row whose fate
//! is still undecided.

use std::collections::BTreeMap;
use std::time::Duration;

use parking_lot::Mutex;
use riptide_common::write_batch::{BatchMarker, WriteBatch as RawBatch};
use riptide_common::{CfId, Error, Result};
use riptide_txn::{LockMode, TxnId, Xid};

use crate::db::DbInner;

/// Prepared transactions found in the WAL at recovery: xid -> the prepare batch (with its
/// marker).
pub(crate) type RecoveredPrepared = BTreeMap<Xid, RawBatch>;

/// One outstanding prepared transaction.
struct Prepared {
    /// The prepare record's batch, marker included (logged again at each rotation).
    batch: RawBatch,
    /// The lock owner holding its keys when no `Transaction` handle does (recovered after a
    /// restart, or its handle was dropped while prepared); finishing it releases them.
    recovered_owner: Option<TxnId>,
}

/// The outstanding prepared transactions of one database.
#[derive(Default)]
pub(crate) struct PreparedTxns {
    map: Mutex<BTreeMap<Xid, Prepared>>,
}

impl std::fmt::Debug for PreparedTxns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedTxns")
            .field("count", &self.map.lock().len())
            .finish()
    }
}

impl PreparedTxns {
    /// The xids of every outstanding prepared transaction, in order.
    pub(crate) fn xids(&self) -> Vec<Xid> {
        self.map.lock().keys().cloned().collect()
    }

    pub(crate) fn contains(&self, xid: &Xid) -> bool {
        self.map.lock().contains_key(xid)
    }

    /// The batches to log again after a WAL rotation.
    pub(crate) fn records(&self) -> Vec<RawBatch> {
        self.map.lock().values().map(|p| p.batch.clone()).collect()
    }

    /// Applies a marked batch that was just logged (caller holds the write lock).
    pub(crate) fn note_logged(&self, batch: &RawBatch) {
        let Some((marker, xid)) = batch.marker() else {
            return;
        };
        let Ok(xid) = Xid::decode(xid) else {
            return;
        };
        let mut map = self.map.lock();
        match marker {
            BatchMarker::Prepare => {
                map.insert(
                    xid,
                    Prepared {
                        batch: batch.clone(),
                        recovered_owner: None,
                    },
                );
            }
            BatchMarker::Commit | BatchMarker::Rollback => {
                map.remove(&xid);
            }
        }
    }

    /// Registers a transaction recovered from the WAL, with the owner of its locks.
    pub(crate) fn insert_recovered(&self, xid: Xid, batch: RawBatch, owner: TxnId) {
        self.map.lock().insert(
            xid,
            Prepared {
                batch,
                recovered_owner: Some(owner),
            },
        );
    }

    /// Hands the write locks of a prepared transaction whose handle was dropped to the
    /// registry: finishing it by xid releases them.
    pub(crate) fn set_owner(&self, xid: &Xid, owner: TxnId) {
        if let Some(p) = self.map.lock().get_mut(xid) {
            p.recovered_owner = Some(owner);
        }
    }

    /// The `(cf, key)` pairs written by the prepared transaction `xid`.
    pub(crate) fn keys_of(&self, xid: &Xid) -> std::collections::BTreeSet<(u32, Vec<u8>)> {
        self.map
            .lock()
            .get(xid)
            .map(|p| {
                p.batch
                    .iter()
                    .filter_map(|e| e.ok().map(|e| (e.cf, e.key.to_vec())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The first outstanding prepared transaction (in xid order) that wrote a key of `cf`
    /// in [`lower`, `upper`) (`None`: no upper bound), with that key.
    pub(crate) fn writer_in_range(
        &self,
        cf: CfId,
        lower: &[u8],
        upper: Option<&[u8]>,
    ) -> Option<(Xid, Vec<u8>)> {
        let map = self.map.lock();
        map.iter().find_map(|(xid, p)| {
            p.batch
                .iter()
                .filter_map(std::result::Result::ok)
                .find(|e| e.cf == cf && e.key >= lower && upper.is_none_or(|u| e.key < u))
                .map(|e| (xid.clone(), e.key.to_vec()))
        })
    }

    fn get(&self, xid: &Xid) -> Option<(RawBatch, Option<TxnId>)> {
        self.map
            .lock()
            .get(xid)
            .map(|p| (p.batch.clone(), p.recovered_owner))
    }
}

/// Folds one replayed WAL batch into the prepared set being recovered. Returns true when the
/// batch is a prepare record (its entries must not be applied).
pub(crate) fn replay_marker(batch: &RawBatch, recovered: &mut RecoveredPrepared) -> Result<bool> {
    let Some((marker, xid)) = batch.marker() else {
        return Ok(false);
    };
    let xid = Xid::decode(xid).map_err(|e| e.with_context("xid of a two-phase-commit record"))?;
    match marker {
        BatchMarker::Prepare => {
            recovered.insert(xid, batch.clone());
            Ok(true)
        }
        BatchMarker::Commit | BatchMarker::Rollback => {
            recovered.remove(&xid);
            Ok(false)
        }
    }
}

impl DbInner {
    /// Logs `batch` as the prepared writes of `xid` (phase one of two-phase commit).
    pub(crate) fn prepare_batch(&self, xid: &Xid, mut batch: RawBatch) -> Result<()> {
        if self.prepared.contains(xid) {
            return Err(Error::invalid_argument(format!(
                "xid {xid} is already prepared by another transaction"
            )));
        }
        batch.set_marker(BatchMarker::Prepare, &xid.encode());
        self.write_raw(batch)
    }

    /// Commits (`commit`) or rolls back the prepared transaction `xid`; `sync` as
    /// [`DbInner::write_raw_with`].
    pub(crate) fn finish_prepared(&self, xid: &Xid, commit: bool, sync: bool) -> Result<()> {
        let Some((prepared, owner)) = self.prepared.get(xid) else {
            return Err(Error::not_found(format!(
                "no prepared transaction has xid {xid}"
            )));
        };
        let mut batch = RawBatch::new();
        if commit {
            batch.append(&prepared);
            batch.set_marker(BatchMarker::Commit, &xid.encode());
        } else {
            batch.set_marker(BatchMarker::Rollback, &xid.encode());
        }
        self.write_raw_with(batch, sync)?;
        if let Some(owner) = owner {
            let keys: Vec<(u32, Vec<u8>)> = prepared
                .iter()
                .filter_map(|e| e.ok().map(|e| (e.cf, e.key.to_vec())))
                .collect();
            self.locks
                .unlock_all(owner, keys.iter().map(|(cf, k)| (*cf, k.as_slice())));
        }
        Ok(())
    }

    /// After recovery (which already logged the records into the current segment): locks
    /// each recovered prepared transaction's keys and registers it. The database is not
    /// shared yet.
    pub(crate) fn adopt_recovered_prepared(&self, recovered: RecoveredPrepared) -> Result<()> {
        for (xid, batch) in recovered {
            let owner = self
                .next_txn_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for entry in batch.iter() {
                let entry = entry?;
                if let Err(e) = self.locks.lock(
                    owner,
                    entry.cf,
                    entry.key,
                    LockMode::Exclusive,
                    Duration::ZERO,
                ) {
                    log::warn!("recovered prepared transaction {xid}: {e}");
                }
            }
            log::info!(
                "recovered prepared transaction {xid} ({} writes)",
                batch.len()
            );
            self.prepared.insert_recovered(xid, batch, owner);
        }
        Ok(())
    }

    /// Logs every outstanding prepare record again (after a WAL rotation; caller holds the
    /// write lock).
    pub(crate) fn relog_prepared(&self) -> Result<()> {
        for batch in self.prepared.records() {
            self.wal.append(batch.data())?;
        }
        Ok(())
    }
}
