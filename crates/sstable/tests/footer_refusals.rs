//! Files that are not Riptide tables, or tables of an unknown format version, are refused with
//! clear Corruption messages.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use riptide_common::ErrorKind;
use riptide_sstable::{Table, TableOptions};

#[test]
fn wrong_magic_and_future_version() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.sst");
    common::write_table(
        &good,
        &common::simple_entries(10, 10),
        TableOptions::default(),
    );
    let bytes = std::fs::read(&good).unwrap();
    let n = bytes.len();
    assert_eq!(&bytes[n - 8..], b"RIPTDSST");

    let path = dir.path().join("magic.sst");
    let mut b = bytes.clone();
    b[n - 1] = b'X';
    std::fs::write(&path, &b).unwrap();
    let e = Table::open(&path, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("not a Riptide table"), "{e}");
    assert!(e.to_string().contains("magic.sst"), "{e}");

    let path = dir.path().join("future.sst");
    let mut b = bytes.clone();
    b[n - 12..n - 8].copy_from_slice(&4u32.to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    let e = Table::open(&path, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(
        e.to_string().contains("format version 4 not supported"),
        "{e}"
    );

    let path = dir.path().join("text.sst");
    std::fs::write(
        &path,
        "this is a plain text file, long enough to hold a footer.......",
    )
    .unwrap();
    let e = Table::open(&path, None).unwrap_err();
    assert!(e.to_string().contains("too short") || e.to_string().contains("not a Riptide table"));
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let e = Table::open(&path, None).unwrap_err();
    assert!(e.to_string().contains("not a Riptide table"), "{e}");

    let e = Table::open(&dir.path().join("missing.sst"), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
}
