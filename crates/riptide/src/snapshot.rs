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
    /// Registers a snapshot at the sequence number `current` returns, read while the list is
    /// locked. Reading it first and registering after would leave a window in which a flush
    /// or compaction reads the list without this snapshot while its inputs already hold
    /// versions newer than the number read: it would then drop an older version the snapshot
    /// needs (seen as a bank-test reader summing to more than the total, issue 17 session 3).
    /// Under the lock, a job that read the list before the registration took its inputs
    /// before the number was read, so they hold nothing newer than it.
    pub(crate) fn register_current(self: &Arc<Self>, current: impl FnOnce() -> SeqNo) -> Snapshot {
        let mut live = self.live.lock();
        let seqno = current();
        *live.entry(seqno).or_insert(0) += 1;
        drop(live);
        Snapshot {
            seqno,
            list: Arc::clone(self),
        }
    }

    /// One more registration of `seqno` if it is registered now, else `None`. While a
    /// snapshot at `seqno` has stayed registered since a reader took its view, every version
    /// that reader can see is still kept, so the reader may move to a newer view and keep
    /// reading at `seqno` under this registration. (Should the number have been released and
    /// registered again meanwhile, it was registered again as the newest number: no write
    /// came after it, so what it sees is the newest version of every key, which no flush or
    /// compaction drops either.)
    pub(crate) fn register_if_live(self: &Arc<Self>, seqno: SeqNo) -> Option<Snapshot> {
        let mut live = self.live.lock();
        let n = live.get_mut(&seqno)?;
        *n += 1;
        drop(live);
        Some(Snapshot {
            seqno,
            list: Arc::clone(self),
        })
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
