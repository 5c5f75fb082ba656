//! Keys not strictly increasing, or not internal keys at all, are refused with InvalidArgument;
//! bad options too.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use riptide_common::key::internal_key;
use riptide_common::{ErrorKind, ValueKind};
use riptide_sstable::{Compression, Table, TableOptions, TableWriter};

#[test]
fn refuses_out_of_order_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = TableWriter::create(&path, TableOptions::default()).unwrap();
    w.add(&internal_key(b"b", 5, ValueKind::Put), b"1").unwrap();
    // Smaller user key.
    let e = w
        .add(&internal_key(b"a", 5, ValueKind::Put), b"x")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Same key again.
    let e = w
        .add(&internal_key(b"b", 5, ValueKind::Put), b"x")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Newer version of the same key sorts before: out of order.
    let e = w
        .add(&internal_key(b"b", 6, ValueKind::Put), b"x")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Not an internal key.
    let e = w.add(b"short", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Older version is fine; the writer still works after refusals.
    w.add(&internal_key(b"b", 4, ValueKind::Delete), b"")
        .unwrap();
    w.add(&internal_key(b"c", 9, ValueKind::Put), b"3").unwrap();
    assert_eq!(w.entries(), 3);
    let props = w.finish().unwrap();
    assert_eq!(props.entries, 3);
    assert_eq!(props.tombstones, 1);
    let t = Table::open(&path, None).unwrap();
    assert_eq!(t.get(b"b", 100).unwrap().unwrap().value, b"1");
}

#[test]
fn refuses_bad_options_and_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    for opts in [
        TableOptions {
            block_size: 0,
            ..TableOptions::default()
        },
        TableOptions {
            restart_interval: 0,
            ..TableOptions::default()
        },
        TableOptions {
            bloom_bits_per_key: 1000,
            ..TableOptions::default()
        },
        TableOptions {
            compression: Compression::Zstd { level: 1000 },
            ..TableOptions::default()
        },
    ] {
        let e = TableWriter::create(&path, opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    std::fs::write(&path, b"x").unwrap();
    let e = TableWriter::create(&path, TableOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
}

#[test]
fn abandon_removes_the_file_and_empty_tables_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = TableWriter::create(&path, TableOptions::default()).unwrap();
    w.add(&internal_key(b"a", 1, ValueKind::Put), b"1").unwrap();
    w.abandon().unwrap();
    assert!(!path.exists());

    let w = TableWriter::create(&path, TableOptions::default()).unwrap();
    let props = w.finish().unwrap();
    assert_eq!(props.entries, 0);
    assert_eq!(props.data_blocks, 0);
    let t = Table::open(&path, None).unwrap();
    assert_eq!(t.get(b"a", 10).unwrap(), None);
    let mut it = t.iter();
    use riptide_common::InternalIterator;
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek_to_last().unwrap();
    assert!(!it.valid());
    it.seek_for_prev(&internal_key(b"z", 1, ValueKind::Put))
        .unwrap();
    assert!(!it.valid());
    assert_eq!(t.file_size(), props.file_size);
}
