//! Range tombstones in a memtable: stored apart from point entries, found by covering key and
//! snapshot, counted in memory, inserted concurrently with readers, and replayed from write
//! batches through `Memtable::insert` exactly like the write path does.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;

use riptide_common::range_del::RangeTombstone;
use riptide_common::write_batch::WriteBatch;
use riptide_common::{InternalIterator, ValueKind};
use riptide_memtable::Memtable;

#[test]
fn range_tombstones_live_apart_from_point_entries() {
    let m = Memtable::new(1);
    assert!(m.is_empty());
    assert!(!m.has_range_tombstones());
    assert_eq!(m.max_covering_seqno(b"a", u64::MAX), None);
    let before = m.approximate_memory_usage();
    assert!(m.insert_range_tombstone(b"b", b"f", 5));
    // Empty and inverted ranges delete nothing and are not stored.
    assert!(!m.insert_range_tombstone(b"x", b"x", 6));
    assert!(!m.insert(b"z", 7, ValueKind::RangeDelete, b"y"));
    assert!(!m.is_empty());
    assert_eq!(m.len(), 0);
    assert_eq!(m.range_tombstone_count(), 1);
    assert_eq!(m.min_seqno(), Some(5));
    assert_eq!(m.max_seqno(), Some(5));
    assert!(m.approximate_memory_usage() > before);
    assert_eq!(
        m.range_tombstones(),
        vec![RangeTombstone::new(*b"b", *b"f", 5)]
    );
    // Not a point version of its start key, and not in the iterator.
    assert_eq!(m.get(b"b", u64::MAX), None);
    let mut it = Arc::new(m).iter();
    it.seek_to_first().unwrap();
    assert!(!it.valid());
}

#[test]
fn covering_seqno_respects_snapshots_and_overlaps() {
    let m = Memtable::new(1);
    m.insert(b"c", 1, ValueKind::Put, b"c1");
    m.insert_range_tombstone(b"a", b"e", 3);
    m.insert_range_tombstone(b"c", b"h", 6);
    m.insert_range_tombstone(b"d", b"f", 4);
    // Latest snapshot: the cached fragments answer.
    assert_eq!(m.max_covering_seqno(b"a", 100), Some(3));
    assert_eq!(m.max_covering_seqno(b"c", 100), Some(6));
    assert_eq!(m.max_covering_seqno(b"g", 100), Some(6));
    assert_eq!(m.max_covering_seqno(b"h", 100), None);
    // Older snapshots: only the tombstones they can see.
    assert_eq!(m.max_covering_seqno(b"c", 5), Some(3));
    assert_eq!(m.max_covering_seqno(b"e", 5), Some(4));
    assert_eq!(m.max_covering_seqno(b"g", 5), None);
    assert_eq!(m.max_covering_seqno(b"c", 2), None);
    assert_eq!(m.range_tombstone_set(5).fragments().len(), 2);
    let all = m.range_tombstone_set(6);
    assert!(
        Arc::ptr_eq(&all, &m.range_tombstone_set(100)),
        "cached set is shared"
    );
    // A new tombstone invalidates the cache.
    m.insert_range_tombstone(b"a", b"b", 9);
    assert_eq!(m.max_covering_seqno(b"a", 100), Some(9));
    assert!(!Arc::ptr_eq(&all, &m.range_tombstone_set(100)));
}

#[test]
fn replayed_batch_routes_range_deletes_to_the_store() {
    // What the write path and WAL replay do: insert every batch entry through `insert`.
    let mut b = WriteBatch::new();
    b.put(b"k1", b"v");
    b.delete_range(b"k0", b"k9");
    b.put(b"k5", b"v");
    b.set_seqno(10);
    let b = WriteBatch::from_data(b.data().to_vec()).unwrap();
    let m = Memtable::new(3);
    for (seqno, e) in (b.seqno()..).zip(b.iter()) {
        let e = e.unwrap();
        assert!(m.insert(e.key, seqno, e.kind, e.value));
    }
    assert_eq!(m.len(), 2);
    assert_eq!(
        m.range_tombstones(),
        vec![RangeTombstone::new(*b"k0", *b"k9", 11)]
    );
    assert_eq!(m.max_covering_seqno(b"k1", 12), Some(11));
    assert_eq!(m.get(b"k1", 12).map(|v| v.seqno), Some(10)); // deleted: 11 > 10
    assert_eq!(m.get(b"k5", 12).map(|v| v.seqno), Some(12)); // newer than the tombstone
}

#[test]
fn concurrent_range_tombstone_inserts_and_reads() {
    let m = Arc::new(Memtable::new(0));
    const WRITERS: u64 = 4;
    const PER: u64 = 200;
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let m = Arc::clone(&m);
            s.spawn(move || {
                for i in 0..PER {
                    let seqno = 1 + w * PER + i;
                    let start = format!("{w}:{i:04}");
                    let end = format!("{w}:{i:04}~");
                    assert!(m.insert_range_tombstone(start.as_bytes(), end.as_bytes(), seqno));
                    m.insert(start.as_bytes(), seqno + 10_000, ValueKind::Put, b"v");
                }
            });
        }
        let m = Arc::clone(&m);
        s.spawn(move || {
            for _ in 0..500 {
                // Whatever is there is consistent: a covered key's seqno is its own.
                let set = m.range_tombstone_set(u64::MAX);
                for f in set.fragments() {
                    assert!(f.start < f.end);
                }
                let _ = m.max_covering_seqno(b"1:0005", u64::MAX);
            }
        });
    });
    assert_eq!(m.range_tombstone_count() as u64, WRITERS * PER);
    assert_eq!(m.len() as u64, WRITERS * PER);
    for w in 0..WRITERS {
        for i in (0..PER).step_by(37) {
            let k = format!("{w}:{i:04}");
            assert_eq!(
                m.max_covering_seqno(k.as_bytes(), u64::MAX),
                Some(1 + w * PER + i)
            );
        }
    }
    assert_eq!(m.range_tombstone_set(u64::MAX).len() as u64, WRITERS * PER);
}
