//! A table cut short at any length is refused with Corruption.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use riptide_common::ErrorKind;
use riptide_sstable::{Compression, Table, TableOptions};

#[test]
fn every_truncation_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let entries = common::simple_entries(200, 30);
    let good = dir.path().join("good.sst");
    common::write_table(
        &good,
        &entries,
        TableOptions {
            block_size: 1024,
            compression: Compression::Zstd { level: 1 },
            ..TableOptions::default()
        },
    );
    let bytes = std::fs::read(&good).unwrap();
    let bad = dir.path().join("bad.sst");
    for len in 0..bytes.len() {
        std::fs::write(&bad, &bytes[..len]).unwrap();
        let r = Table::open(&bad, None).and_then(|t| common::read_everything(&t));
        let e = r.expect_err("truncated table accepted");
        assert_eq!(e.kind(), ErrorKind::Corruption, "length {len}: {e}");
        if len < 68 {
            assert!(e.to_string().contains("too short"), "{e}");
        }
    }
    // Extra bytes appended are refused too (the footer is no longer at the end).
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0u8; 3]);
    std::fs::write(&bad, &longer).unwrap();
    assert_eq!(
        Table::open(&bad, None).unwrap_err().kind(),
        ErrorKind::Corruption
    );
}
