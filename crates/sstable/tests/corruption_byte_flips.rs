//! Flipping any byte of a table is detected: open or a read returns Corruption, never a panic
//! and never silently wrong data (every byte of the file is covered by a checksum).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::sync::Arc;

use riptide_common::key::internal_key;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{ErrorKind, ValueKind};
use riptide_sstable::{BlockCache, Compression, Table, TableOptions, TableWriter};

fn entries() -> common::Entries {
    let mut e = common::Entries::new();
    for i in 0..60u32 {
        let uk = format!("k{i:04}");
        e.push((
            internal_key(uk.as_bytes(), 100 + u64::from(i), ValueKind::Put),
            format!("value-{i}-").repeat(3).into_bytes(),
        ));
        if i % 7 == 0 {
            e.push((internal_key(uk.as_bytes(), 50, ValueKind::Delete), vec![]));
        }
    }
    e
}

/// Range tombstones written with the entries (so the range-deletion block is flipped too).
fn tombstones() -> Vec<RangeTombstone> {
    vec![
        RangeTombstone::new(&b"k0003"[..], &b"k0009"[..], 70),
        RangeTombstone::new(&b"k0001"[..], &b"k0002"[..], 20),
        RangeTombstone::new(&b"k0050"[..], &b"z"[..], 90),
    ]
}

fn write(path: &std::path::Path, entries: &common::Entries, opts: TableOptions) {
    let mut w = TableWriter::create(path, opts).unwrap();
    for (k, v) in entries {
        w.add(k, v).unwrap();
    }
    for t in tombstones() {
        w.add_range_tombstone(&t.start, &t.end, t.seqno).unwrap();
    }
    w.finish().unwrap();
}

/// Opens and reads the whole table; Ok only if everything read equals `expected`.
fn open_and_read(
    path: &std::path::Path,
    expected: &common::Entries,
    cache: Option<Arc<BlockCache>>,
) -> riptide_common::Result<()> {
    let t = Table::open(path, cache)?;
    let mut want = tombstones();
    want.sort_by(|a, b| a.start.cmp(&b.start));
    assert_eq!(
        *t.range_tombstones()?,
        want,
        "flip went unnoticed and changed the range tombstones"
    );
    let read = common::read_everything(&t)?;
    for (k, _) in expected {
        let uk = riptide_common::key::user_key(k);
        t.get(uk, u64::MAX >> 8)?;
    }
    assert_eq!(&read, expected, "flip went unnoticed and changed the data");
    Ok(())
}

fn flip_every_byte(opts: TableOptions) {
    let dir = tempfile::tempdir().unwrap();
    let expected = entries();
    let good = dir.path().join("good.sst");
    write(&good, &expected, opts);
    let bytes = std::fs::read(&good).unwrap();
    open_and_read(&good, &expected, None).unwrap();
    let bad = dir.path().join("bad.sst");
    let mut undetected = Vec::new();
    for pos in 0..bytes.len() {
        // Alternate low and high bits to keep the test quick.
        {
            let mask = if pos % 2 == 0 { 0x01u8 } else { 0x80 };
            let mut b = bytes.clone();
            b[pos] ^= mask;
            std::fs::write(&bad, &b).unwrap();
            match open_and_read(&bad, &expected, Some(Arc::new(BlockCache::new(1 << 20)))) {
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Corruption, "byte {pos}: {e}");
                    assert!(e.to_string().contains("bad.sst"), "byte {pos}: {e}");
                }
                Ok(()) => undetected.push(pos),
            }
        }
    }
    assert!(
        undetected.is_empty(),
        "flips at {undetected:?} of {} bytes went unnoticed",
        bytes.len()
    );
}

#[test]
fn every_byte_uncompressed() {
    flip_every_byte(TableOptions {
        block_size: 512,
        compression: Compression::None,
        ..TableOptions::default()
    });
}

#[test]
fn every_byte_zstd() {
    flip_every_byte(TableOptions {
        block_size: 512,
        compression: Compression::Zstd { level: 1 },
        ..TableOptions::default()
    });
}

#[test]
fn error_names_the_block_offset() {
    let dir = tempfile::tempdir().unwrap();
    let expected = entries();
    let path = dir.path().join("t.sst");
    common::write_table(
        &path,
        &expected,
        TableOptions {
            block_size: 512,
            compression: Compression::None,
            ..TableOptions::default()
        },
    );
    let mut b = std::fs::read(&path).unwrap();
    b[10] ^= 0xff;
    std::fs::write(&path, &b).unwrap();
    let t = Table::open(&path, None).unwrap();
    let e = common::read_everything(&t).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("data block at offset 0"), "{msg}");
    assert!(msg.contains("checksum mismatch"), "{msg}");
    assert!(msg.contains("t.sst"), "{msg}");
}
