//! Damage before the tail is a `Corruption` error naming the file and the offset.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{flip, open_collect, opts, record_offsets, seg, write_log};
use riptide_wal::{ErrorKind, RecoveryMode};

fn lens(all: &[Vec<u8>]) -> Vec<usize> {
    all.iter().map(Vec::len).collect()
}

#[test]
fn flipped_payload_byte_in_a_middle_record_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 1, 10);
    let offs = record_offsets(&lens(&all));
    // Record 5: flip its last payload byte (record 5 is payload(5), non-empty).
    let bad = offs[5];
    flip(&seg(tmp.path(), 1), offs[6] - 1);
    let before = std::fs::read(seg(tmp.path(), 1)).unwrap();
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
    ] {
        let e = open_collect(tmp.path(), opts(mode), 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        let msg = e.to_string();
        assert!(msg.contains("000001.log"), "{msg}");
        assert!(msg.contains(&format!("offset {bad}")), "{msg}");
        // Nothing was touched.
        assert_eq!(std::fs::read(seg(tmp.path(), 1)).unwrap(), before);
    }
    let e = open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("intact record follows at offset {}", offs[6])),
        "{e}"
    );
}

#[test]
fn damaged_length_field_in_a_middle_record_is_corruption_not_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 1, 10);
    let offs = record_offsets(&lens(&all));
    // The length field's high byte: the record now claims to run past the end of file.
    flip(&seg(tmp.path(), 1), offs[3] + 11);
    let e = open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let msg = e.to_string();
    assert!(msg.contains("000001.log"), "{msg}");
    assert!(msg.contains(&format!("offset {}", offs[3])), "{msg}");
    assert!(msg.contains("past end of file"), "{msg}");
}

#[test]
fn damage_in_a_non_last_segment_is_corruption_even_at_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 3, 4);
    // The last record of segment 2 (records 4..8).
    let offs = record_offsets(&lens(&all[4..8]));
    flip(&seg(tmp.path(), 2), offs[4] - 1);
    let e = open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let msg = e.to_string();
    assert!(msg.contains("000002.log"), "{msg}");
    assert!(msg.contains(&format!("offset {}", offs[3])), "{msg}");
    assert!(msg.contains("not the last segment"), "{msg}");
}

#[test]
fn a_missing_segment_in_the_middle_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 4, 2);
    std::fs::remove_file(seg(tmp.path(), 2)).unwrap();
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
    ] {
        let e = open_collect(tmp.path(), opts(mode), 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.to_string().contains("segment 2 is missing"), "{e}");
    }
    // Starting replay after the gap is fine.
    let (_wal, report, seen) =
        open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 3).unwrap();
    assert_eq!(report.segments_replayed, vec![3, 4]);
    assert_eq!(seen.len(), 4);
}
