//! Snapshots: a sequence number that pins a consistent view of the database.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use riptide_common::SeqNo;

/// The live snapshots of one database, so compaction keeps the versions they can see.
#[derive(Debug, Default)]
pub(crate) struct SnapshotList {
    live: Mutex<BTreeMap<SeqNo, usize>>,
}

impl SnapshotList {
    pub(crate) fn register(self: &Arc<Self>, seqno: SeqNo) -> Snapshot {
        *self.live.lock().entry(seqno).or_insert(0) += 1;
        Snapshot {
            seqno,
            list: Arc::clone(self),
        }
    }

    fn release(&self, seqno: SeqNo) {
        let mut live = self.live.lock();
        if let Some(n) = live.get_mut(&seqno) {
            *n -= 1;
            if *n == 0 {
                live.remove(&seqno);
            }
        }
    }

    /// Sequence numbers of live snapshots, ascending, without duplicates.
    pub(crate) fn seqnos(&self) -> Vec<SeqNo> {
        self.live.lock().keys().copied().collect()
    }

    pub(crate) fn count(&self) -> usize {
        self.live.lock().values().sum()
    }
}

/// A consistent, read-only view of the database as of one moment. Reads through
/// [`crate::ReadOptions::snapshot`] see exactly the writes committed before the snapshot was
/// taken. Releasing it (dropping) lets compaction discard versions only it could see.
#[derive(Debug)]
pub struct Snapshot {
    seqno: SeqNo,
    list: Arc<SnapshotList>,
}

impl Snapshot {
    /// The sequence number of the last write this snapshot sees.
    pub fn seqno(&self) -> SeqNo {
        self.seqno
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.list.release(self.seqno);
    }
}
