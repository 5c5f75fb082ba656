//! The range-deletion block (format version 2): tombstones added in any order come back
//! sorted, count in the properties and widen the table's key range; tables holding only
//! tombstones work; version-1 tables (no such block) stay readable; damage is Corruption.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use riptide_common::ErrorKind;
use riptide_common::key::{MAX_SEQNO, internal_key};
use riptide_common::range_del::{RangeTombstone, is_range_end_key, range_end_key};
use riptide_common::{InternalIterator, ValueKind};
use riptide_sstable::format::{FOOTER_LEN, Footer, MIN_FOOTER_LEN};
use riptide_sstable::{Table, TableOptions, TableWriter};

fn t(start: &str, end: &str, seqno: u64) -> RangeTombstone {
    RangeTombstone::new(start.as_bytes(), end.as_bytes(), seqno)
}

fn put(k: &str, seqno: u64) -> (Vec<u8>, Vec<u8>) {
    (
        internal_key(k.as_bytes(), seqno, ValueKind::Put),
        b"v".to_vec(),
    )
}

fn write(
    path: &std::path::Path,
    entries: &[(Vec<u8>, Vec<u8>)],
    tombstones: &[RangeTombstone],
) -> riptide_sstable::TableProperties {
    let mut w = TableWriter::create(path, TableOptions::default()).unwrap();
    // Interleave: half the tombstones before the points, half after.
    let (a, b) = tombstones.split_at(tombstones.len() / 2);
    for t in a {
        w.add_range_tombstone(&t.start, &t.end, t.seqno).unwrap();
    }
    for (k, v) in entries {
        w.add(k, v).unwrap();
    }
    for t in b {
        w.add_range_tombstone(&t.start, &t.end, t.seqno).unwrap();
    }
    assert_eq!(w.range_tombstones(), tombstones.len());
    w.finish().unwrap()
}

#[test]
fn tombstones_come_back_sorted_and_widen_the_key_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let entries = vec![put("d", 5), put("f", 9), put("m", 2)];
    let ts = vec![
        t("k", "q", 7),
        t("a", "c", 3),
        t("e", "z", 11),
        t("a", "b", 8),
    ];
    let props = write(&path, &entries, &ts);
    assert_eq!(props.range_deletes, 4);
    assert_eq!(props.entries, 3);
    assert_eq!(props.min_seqno, 2);
    assert_eq!(props.max_seqno, 11);
    assert_eq!(
        props.smallest_key,
        internal_key(b"a", 8, ValueKind::RangeDelete)
    );
    assert_eq!(props.largest_key, range_end_key(b"z"));
    assert!(is_range_end_key(&props.largest_key));

    let table = Table::open(&path, None).unwrap();
    assert!(table.has_range_tombstones());
    assert_eq!(table.properties().format_version, 2);
    assert_eq!(table.properties().smallest_key, props.smallest_key);
    assert_eq!(table.properties().largest_key, props.largest_key);
    assert_eq!(
        *table.range_tombstones().unwrap(),
        vec![
            t("a", "b", 8),
            t("a", "c", 3),
            t("e", "z", 11),
            t("k", "q", 7)
        ]
    );
    // Point entries are unchanged and never show a range delete.
    assert_eq!(common::read_everything(&table).unwrap(), entries);
    assert_eq!(table.max_covering_tombstone_seqno(b"a", MAX_SEQNO), Some(8));
    assert_eq!(table.max_covering_tombstone_seqno(b"b", MAX_SEQNO), Some(3));
    assert_eq!(
        table.max_covering_tombstone_seqno(b"m", MAX_SEQNO),
        Some(11)
    );
    assert_eq!(table.max_covering_tombstone_seqno(b"m", 10), Some(7));
    assert_eq!(table.max_covering_tombstone_seqno(b"m", 6), None);
    assert_eq!(table.max_covering_tombstone_seqno(b"z", MAX_SEQNO), None);
    assert_eq!(table.range_tombstone_set(MAX_SEQNO).len(), 3);
    assert_eq!(
        table.range_tombstone_set(7).fragments(),
        &[t("a", "c", 3), t("k", "q", 7)]
    );
}

#[test]
fn a_point_key_at_the_range_end_is_the_largest_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let props = write(&path, &[put("q", 1)], &[t("a", "q", 4)]);
    // (q, 1) sorts after the range end (q, MAX_SEQNO): the point is the largest key.
    assert_eq!(props.largest_key, internal_key(b"q", 1, ValueKind::Put));
    assert_eq!(
        props.smallest_key,
        internal_key(b"a", 4, ValueKind::RangeDelete)
    );
}

#[test]
fn a_table_of_tombstones_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let props = write(&path, &[], &[t("x", "y", 3), t("b", "c", 4)]);
    assert_eq!(props.entries, 0);
    assert_eq!(props.data_blocks, 0);
    assert_eq!(
        props.smallest_key,
        internal_key(b"b", 4, ValueKind::RangeDelete)
    );
    assert_eq!(props.largest_key, range_end_key(b"y"));
    assert_eq!((props.min_seqno, props.max_seqno), (3, 4));
    let table = Table::open(&path, None).unwrap();
    assert_eq!(table.range_tombstones().unwrap().len(), 2);
    assert!(common::read_everything(&table).unwrap().is_empty());
    assert_eq!(table.get(b"b", MAX_SEQNO).unwrap(), None);
    let mut it = table.iter();
    it.seek(&internal_key(b"b", 9, ValueKind::Put)).unwrap();
    assert!(!it.valid());
}

#[test]
fn same_start_and_seqno_are_merged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let props = write(
        &path,
        &[],
        &[t("a", "c", 5), t("a", "f", 5), t("a", "b", 5)],
    );
    assert_eq!(props.range_deletes, 1);
    let table = Table::open(&path, None).unwrap();
    assert_eq!(*table.range_tombstones().unwrap(), vec![t("a", "f", 5)]);
}

#[test]
fn writer_refuses_bad_tombstones_and_range_delete_points() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = TableWriter::create(&dir.path().join("t.sst"), TableOptions::default()).unwrap();
    for (s, e, q) in [("b", "a", 1), ("b", "b", 1), ("a", "b", MAX_SEQNO)] {
        let err = w
            .add_range_tombstone(s.as_bytes(), e.as_bytes(), q)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    }
    let err = w
        .add(&internal_key(b"a", 1, ValueKind::RangeDelete), b"b")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("add_range_tombstone"), "{err}");
    w.abandon().unwrap();
}

#[test]
fn version_1_tables_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.sst");
    let entries = common::simple_entries(300, 20);
    common::write_table(&path, &entries, TableOptions::default());
    // Rewrite the footer as version 1 (same blocks, no range-del handle).
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let footer = Footer::decode(&bytes[n - FOOTER_LEN..]).unwrap();
    assert_eq!(footer.version, 2);
    assert_eq!(footer.range_del, None);
    let v1 = Footer {
        version: 1,
        ..footer
    }
    .encode()
    .unwrap();
    assert_eq!(v1.len(), MIN_FOOTER_LEN);
    let mut old = bytes[..n - FOOTER_LEN].to_vec();
    old.extend_from_slice(&v1);
    let old_path = dir.path().join("v1.sst");
    std::fs::write(&old_path, &old).unwrap();
    let table = Table::open(&old_path, None).unwrap();
    assert_eq!(table.properties().format_version, 1);
    assert!(!table.has_range_tombstones());
    assert_eq!(common::read_everything(&table).unwrap(), entries);
    let uk = riptide_common::key::user_key(&entries[7].0).to_vec();
    assert!(table.get(&uk, MAX_SEQNO).unwrap().is_some());
}

#[test]
fn damaged_range_del_block_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    write(&path, &[put("d", 5)], &[t("a", "c", 3), t("e", "z", 11)]);
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let footer = Footer::decode(&bytes[n - FOOTER_LEN..]).unwrap();
    let h = footer.range_del.unwrap();
    for pos in h.offset..h.offset + h.size + 9 {
        let mut b = bytes.clone();
        b[pos as usize] ^= 0x04;
        let bad = dir.path().join("bad.sst");
        std::fs::write(&bad, &b).unwrap();
        let e = Table::open(&bad, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "byte {pos}: {e}");
        let msg = e.to_string();
        assert!(msg.contains("bad.sst"), "{msg}");
        assert!(
            msg.contains(&format!("range-del block at offset {}", h.offset)),
            "byte {pos}: {msg}"
        );
    }
}
