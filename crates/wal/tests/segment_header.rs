//! Damaged, foreign, renamed and future-version segment headers are detected.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{flip, open_collect, opts, seg, write_log};
use riptide_wal::{ErrorKind, RecoveryMode};

const ALL_MODES_BUT_PIT: [RecoveryMode; 2] = [
    RecoveryMode::TolerateCorruptedTail,
    RecoveryMode::AbsoluteConsistency,
];

#[test]
fn flipped_header_byte_is_corruption() {
    for (byte, what) in [
        (2u64, "bad magic"),
        (9, "checksum"),
        (17, "checksum"),
        (30, "checksum"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        write_log(tmp.path(), 2, 2);
        flip(&seg(tmp.path(), 1), byte);
        for mode in ALL_MODES_BUT_PIT {
            let e = open_collect(tmp.path(), opts(mode), 1).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
            let msg = e.to_string();
            assert!(msg.contains("000001.log"), "{msg}");
            assert!(msg.contains("offset 0"), "{msg}");
            assert!(msg.contains(what), "{msg}");
        }
    }
}

#[test]
fn damaged_header_of_the_last_segment_is_not_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 2, 2);
    flip(&seg(tmp.path(), 2), 12);
    let e = open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("000002.log"), "{e}");
}

#[test]
fn renamed_segment_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 2, 2);
    std::fs::rename(seg(tmp.path(), 2), seg(tmp.path(), 3)).unwrap();
    std::fs::copy(seg(tmp.path(), 1), seg(tmp.path(), 2)).unwrap();
    let e = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let msg = e.to_string();
    assert!(msg.contains("000002.log"), "{msg}");
    assert!(msg.contains("says segment 1"), "{msg}");
    assert!(msg.contains("renamed or misplaced"), "{msg}");
}

#[test]
fn foreign_file_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 1, 2);
    std::fs::write(
        seg(tmp.path(), 2),
        b"this is not a write-ahead log segment, just some text",
    )
    .unwrap();
    for mode in ALL_MODES_BUT_PIT {
        let e = open_collect(tmp.path(), opts(mode), 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.to_string().contains("not a Riptide WAL segment"), "{e}");
    }
    // Short foreign content is not mistaken for a torn header either.
    std::fs::write(seg(tmp.path(), 2), b"hello").unwrap();
    let e = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    // Files that are not named like segments are ignored.
    std::fs::remove_file(seg(tmp.path(), 2)).unwrap();
    std::fs::write(tmp.path().join("2.log"), b"x").unwrap();
    std::fs::write(tmp.path().join("000002.log.discarded"), b"x").unwrap();
    std::fs::write(tmp.path().join("LOCK"), b"").unwrap();
    let (_wal, report, seen) =
        open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert_eq!(report.segments_replayed, vec![1]);
    assert_eq!(seen.len(), 2);
}

#[test]
fn future_format_version_is_not_supported() {
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 1, 1);
    let path = seg(tmp.path(), 1);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let sum = xxh3(&bytes[..24]);
    bytes[24..32].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let e = open_collect(tmp.path(), opts(RecoveryMode::PointInTime), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("version 2"), "{e}");
    assert!(e.to_string().contains("000001.log"), "{e}");
}

fn xxh3(b: &[u8]) -> u64 {
    riptide_common::checksum::checksum(b)
}
