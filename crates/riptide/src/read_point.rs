//! Where a read looks from: the view of a column family and the sequence number it is read
//! at, taken in the one order that makes the pair a consistent picture.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use riptide_common::SeqNo;

use crate::cf::{CfView, ColumnFamily};
use crate::db::DbInner;
use crate::snapshot::Snapshot;

/// Where a read looks from. The view and the number must be taken in a given order, and the
/// order differs between the two kinds:
/// - A registered snapshot's number comes *before* the view. A view taken earlier could
///   predate a memtable switch and miss writes at or below the number that went into the new
///   memtable: a transaction reading one key through such a view and another through a later
///   one would see two points in time (a transfer's credit without its debit).
/// - An unregistered number (the newest) comes *after* the view. Nothing keeps versions for
///   it, so a flush or compaction installed between the number and a later view could have
///   dropped a version it needs. Read after the view, every version the view lacks is
///   shadowed by one at or below the number; and the view at that number is a consistent
///   cut (the writes made after the view's memtable was frozen went, whole, to a newer one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadPoint {
    /// A registered snapshot's sequence number (registered before this read point is used).
    Snapshot(SeqNo),
    /// The newest committed sequence number, read after the view.
    Newest,
}

impl ReadPoint {
    /// A read at `snapshot` (registered), or at the newest number without one.
    pub(crate) fn of(snapshot: Option<&Snapshot>) -> ReadPoint {
        snapshot.map_or(ReadPoint::Newest, |s| ReadPoint::Snapshot(s.seqno()))
    }

    /// The view of `cf` and the sequence number to read it at, in the order above.
    pub(crate) fn view(self, db: &DbInner, cf: &ColumnFamily) -> (Arc<CfView>, SeqNo) {
        match self {
            ReadPoint::Snapshot(seqno) => {
                between_number_and_view();
                (cf.data.view(), seqno)
            }
            ReadPoint::Newest => {
                let view = cf.data.view();
                between_number_and_view();
                (view, db.last_seqno.load(Ordering::Acquire))
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Test hook: runs (once, then is cleared) on this thread between taking the number and
    /// the view of a read point, whichever comes first.
    static BETWEEN: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs the test hook, if any; nothing outside tests.
#[inline(always)]
fn between_number_and_view() {
    #[cfg(test)]
    if let Some(hook) = BETWEEN.with(|h| h.borrow_mut().take()) {
        hook();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;

    use super::BETWEEN;
    use crate::{Db, IsolationLevel, Options, SyncMode, TransactionOptions, WriteBatch};

    fn open(dir: &std::path::Path) -> Arc<Db> {
        Arc::new(Db::open(dir, Options::default().sync_mode(SyncMode::None)).unwrap())
    }

    fn num(v: Option<Vec<u8>>) -> u64 {
        String::from_utf8(v.expect("key present"))
            .unwrap()
            .parse()
            .unwrap()
    }

    fn begin(db: &Db, isolation: IsolationLevel) -> crate::Transaction {
        db.begin_transaction(TransactionOptions::default().isolation(isolation))
            .unwrap()
    }

    /// Runs `hook` at the next read point taken on this thread.
    fn at_next_read_point(hook: impl FnOnce() + 'static) {
        BETWEEN.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    }

    /// A memtable switch, then a transfer, while a repeatable-read transaction takes its
    /// first read point: the transaction's reads of both accounts agree (before the
    /// fix, the first read's view predated the switch and missed the transfer that the
    /// snapshot, registered after it, includes: the sum was off).
    #[test]
    fn a_snapshot_read_sees_one_point_in_time_across_a_memtable_switch() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let cf = db.default_cf();
        db.put(b"a", b"100").unwrap();
        db.put(b"b", b"0").unwrap();
        let txn = begin(&db, IsolationLevel::RepeatableRead);
        let writer = Arc::clone(&db);
        at_next_read_point(move || {
            // The switch first: the transfer goes into a memtable newer than any view taken
            // before this point.
            writer.flush().unwrap();
            let mut transfer = WriteBatch::new();
            transfer.put(b"a", b"40").put(b"b", b"60");
            writer.write(transfer).unwrap();
        });
        let a = num(txn.get(&cf, b"a").unwrap());
        let b = num(txn.get(&cf, b"b").unwrap());
        assert_eq!(a + b, 100, "a = {a}, b = {b}");
        txn.commit().unwrap();
        assert_eq!(num(db.get(b"a").unwrap()), 40);
    }

    /// A read at the newest number, while an overwrite is flushed and compacted away under it
    /// (no snapshot keeps the old version): the read still finds the key (before the view
    /// was taken first, a newest number read before such a compaction found nothing).
    #[test]
    fn a_newest_read_finds_a_key_compacted_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let cf = db.default_cf();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
        let txn = begin(&db, IsolationLevel::ReadCommitted);
        let writer = Arc::clone(&db);
        at_next_read_point(move || {
            writer.put(b"a", b"2").unwrap();
            writer.flush().unwrap();
            writer.compact_range(&writer.default_cf(), None).unwrap();
        });
        let mut it = txn
            .iter(&cf, crate::ReadOptions::default())
            .expect("iterator");
        it.seek_to_first().unwrap();
        assert!(
            it.valid(),
            "the key vanished from a read at the newest number"
        );
        assert_eq!(it.key(), b"a");
        drop(it);
        txn.commit().unwrap();
    }
}
