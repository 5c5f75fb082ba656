//! A flushed memtable reads back through the table, minus versions no snapshot can see.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::Arc;

use riptide_common::ValueKind;
use riptide_compaction::flush_memtable;
use riptide_memtable::Memtable;
use riptide_sstable::TableOptions;
use util::{names, read_all};

fn memtable() -> Arc<Memtable> {
    let m = Arc::new(Memtable::new(1));
    m.insert(b"a", 1, ValueKind::Put, b"a1");
    m.insert(b"a", 4, ValueKind::Put, b"a4");
    m.insert(b"a", 6, ValueKind::Put, b"a6");
    m.insert(b"b", 2, ValueKind::Put, b"b2");
    m.insert(b"b", 5, ValueKind::Delete, b"");
    m.insert(b"c", 3, ValueKind::Put, b"c3");
    m
}

#[test]
fn flush_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let opts = TableOptions::default();
    let h = flush_memtable(
        &riptide_common::fs::real(),
        &memtable(),
        dir.path(),
        7,
        &opts,
        None,
        &[],
    )
    .unwrap()
    .unwrap();
    assert_eq!(h.number(), 7);
    assert!(h.path().ends_with("000007.sst"));
    assert!(!h.is_obsolete());
    let entries = read_all(&mut h.iter());
    // Newest version per key; the delete is kept (older data may be below).
    assert_eq!(names(&entries), ["a6P", "b5D", "c3P"]);
    assert_eq!(entries[0].3, b"a6");
    assert_eq!(h.meta.entries, 3);
    assert_eq!(h.meta.tombstones, 1);
    assert_eq!((h.meta.min_seqno, h.meta.max_seqno), (3, 6));
    assert_eq!(riptide_common::key::user_key(&h.meta.smallest), b"a");
    assert_eq!(riptide_common::key::user_key(&h.meta.largest), b"c");
    assert_eq!(h.meta.file_size, std::fs::metadata(h.path()).unwrap().len());
    let got = h.table().unwrap().get(b"a", 5).unwrap();
    assert!(got.is_none(), "a4 was dropped: no snapshot at 5");
}

#[test]
fn snapshots_keep_versions() {
    let dir = tempfile::tempdir().unwrap();
    let opts = TableOptions::default();
    let h = flush_memtable(
        &riptide_common::fs::real(),
        &memtable(),
        dir.path(),
        8,
        &opts,
        None,
        &[4, 2],
    )
    .unwrap()
    .unwrap();
    let entries = read_all(&mut h.iter());
    assert_eq!(names(&entries), ["a6P", "a4P", "a1P", "b5D", "b2P", "c3P"]);
    assert_eq!(
        h.table().unwrap().get(b"a", 5).unwrap().unwrap().value,
        b"a4"
    );
}

#[test]
fn empty_or_fully_cancelled_memtable_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = TableOptions::default();
    let m = Arc::new(Memtable::new(1));
    assert!(
        flush_memtable(
            &riptide_common::fs::real(),
            &m,
            dir.path(),
            1,
            &opts,
            None,
            &[]
        )
        .unwrap()
        .is_none()
    );
    m.insert(b"k", 1, ValueKind::Put, b"v");
    m.insert(b"k", 2, ValueKind::SingleDelete, b"");
    assert!(
        flush_memtable(
            &riptide_common::fs::real(),
            &m,
            dir.path(),
            2,
            &opts,
            None,
            &[]
        )
        .unwrap()
        .is_none()
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
}
