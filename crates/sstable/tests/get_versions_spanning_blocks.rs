//! A key with many versions spread over several data blocks: get at every snapshot returns the
//! newest visible version, continuing into later blocks when needed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use riptide_common::key::internal_key;
use riptide_common::{InternalIterator, ValueKind};
use riptide_sstable::{Compression, TableOptions};

#[test]
fn get_at_every_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = common::Entries::new();
    entries.push((
        internal_key(b"aaa", 500, ValueKind::Put),
        b"before".to_vec(),
    ));
    // Versions 400, 398, ..., 2 of "hot": even seqnos, every 10th a delete.
    for s in (1..=200u64).rev().map(|i| i * 2) {
        let kind = if s % 20 == 0 {
            ValueKind::Delete
        } else {
            ValueKind::Put
        };
        let value = if kind == ValueKind::Put {
            format!("hot@{s}").repeat(5).into_bytes()
        } else {
            Vec::new()
        };
        entries.push((internal_key(b"hot", s, kind), value));
    }
    entries.push((internal_key(b"zzz", 1, ValueKind::Put), b"after".to_vec()));
    for compression in [Compression::None, Compression::Zstd { level: 3 }] {
        let opts = TableOptions {
            block_size: 256,
            compression,
            ..TableOptions::default()
        };
        let name = format!("t-{}.sst", compression.name());
        let table = common::build(dir.path(), &name, &entries, opts, None);
        assert!(
            table.properties().data_blocks > 10,
            "{}",
            table.properties().data_blocks
        );
        assert_eq!(table.properties().tombstones, 20);
        assert_eq!(table.properties().min_seqno, 1);
        assert_eq!(table.properties().max_seqno, 500);
        for snapshot in 0..=450u64 {
            let got = table.get(b"hot", snapshot).unwrap();
            let newest = (snapshot.min(400) / 2) * 2;
            if newest == 0 {
                assert_eq!(got, None, "snapshot {snapshot}");
                continue;
            }
            let got = got.unwrap_or_else(|| panic!("snapshot {snapshot}: nothing"));
            assert_eq!(got.seqno, newest, "snapshot {snapshot}");
            if newest % 20 == 0 {
                assert_eq!(got.kind, ValueKind::Delete);
                assert!(got.value.is_empty());
            } else {
                assert_eq!(got.kind, ValueKind::Put);
                assert_eq!(got.value, format!("hot@{newest}").repeat(5).into_bytes());
            }
        }
        assert_eq!(table.get(b"aaa", 499).unwrap(), None);
        assert_eq!(table.get(b"aaa", 500).unwrap().unwrap().value, b"before");
        assert_eq!(
            table.get(b"zzz", u64::MAX >> 8).unwrap().unwrap().value,
            b"after"
        );
        assert_eq!(table.get(b"hot\0", 1000).unwrap(), None);
        assert_eq!(table.get(b"ho", 1000).unwrap(), None);
        // And the iterator sees everything in order.
        let read = common::read_everything(&table).unwrap();
        assert_eq!(read, entries);
        let mut it = table.iter();
        it.seek(&riptide_common::key::seek_key(b"hot", 101))
            .unwrap();
        assert_eq!(it.key(), internal_key(b"hot", 100, ValueKind::Delete));
    }
}

#[test]
fn get_across_shortened_separators() {
    // Long user keys with a short distinguishing prefix make the writer shorten separators, so
    // the first block whose separator is >= the target may not hold it.
    let dir = tempfile::tempdir().unwrap();
    let entries: common::Entries = (0..500u32)
        .map(|i| {
            let uk = format!("{:03}{}", i, "x".repeat(40));
            (
                internal_key(uk.as_bytes(), 7, ValueKind::Put),
                vec![b'v'; 50],
            )
        })
        .collect();
    let opts = TableOptions {
        block_size: 300,
        compression: Compression::None,
        ..TableOptions::default()
    };
    let table = common::build(dir.path(), "t.sst", &entries, opts, None);
    for i in 0..500u32 {
        let uk = format!("{:03}{}", i, "x".repeat(40));
        assert!(table.get(uk.as_bytes(), 7).unwrap().is_some(), "{i}");
        let between = format!("{:03}{}", i, "y");
        assert!(table.get(between.as_bytes(), 7).unwrap().is_none());
    }
}
