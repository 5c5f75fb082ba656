//! Point-in-time recovery stops at the first damage and keeps the intact prefix.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{flip, open_collect, opts, record_offsets, seg, write_log};
use riptide_wal::RecoveryMode;

#[test]
fn stops_at_first_damage_and_sets_later_segments_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = write_log(dir, 3, 4);
    let offs = record_offsets(&all[4..8].iter().map(Vec::len).collect::<Vec<_>>());
    // Damage record 1 of segment 2 (all[5]).
    flip(&seg(dir, 2), offs[2] - 1);
    let seg3 = std::fs::read(seg(dir, 3)).unwrap();

    let (wal, report, seen) = open_collect(dir, opts(RecoveryMode::PointInTime), 1).unwrap();
    let payloads: Vec<_> = seen.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(payloads, all[..5].to_vec());
    assert_eq!(report.segments_replayed, vec![1, 2]);
    assert_eq!(report.tail_truncated, Some((seg(dir, 2), offs[1])));
    let why = report.stopped_early.clone().unwrap();
    assert!(why.contains("000002.log"), "{why}");
    assert!(why.contains(&format!("offset {}", offs[1])), "{why}");
    assert!(why.contains("000003.log.discarded"), "{why}");
    // Segment 2 was truncated at the damage, segment 3 kept aside byte for byte.
    assert_eq!(std::fs::metadata(seg(dir, 2)).unwrap().len(), offs[1]);
    let aside = dir.join("000003.log.discarded");
    assert_eq!(std::fs::read(&aside).unwrap(), seg3);
    // Writing continues right after the kept prefix.
    assert_eq!(wal.current_segment(), 3);
    wal.append(b"new").unwrap();
    wal.close().unwrap();
    drop(wal);

    let (_wal, report, seen) =
        open_collect(dir, opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    let mut expected = all[..5].to_vec();
    expected.push(b"new".to_vec());
    assert_eq!(
        seen.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(report.stopped_early, None);
    assert!(aside.exists());
}

#[test]
fn damaged_header_sets_that_segment_aside_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = write_log(dir, 3, 2);
    flip(&seg(dir, 2), 20);
    let (wal, report, seen) = open_collect(dir, opts(RecoveryMode::PointInTime), 1).unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        all[..2].to_vec()
    );
    assert_eq!(report.segments_replayed, vec![1]);
    assert_eq!(report.tail_truncated, None);
    let why = report.stopped_early.unwrap();
    assert!(why.contains("header checksum mismatch"), "{why}");
    assert!(dir.join("000002.log.discarded").exists());
    assert!(dir.join("000003.log.discarded").exists());
    assert_eq!(wal.current_segment(), 2);
}

#[test]
fn a_gap_stops_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_log(dir, 4, 2);
    std::fs::remove_file(seg(dir, 3)).unwrap();
    let (wal, report, seen) = open_collect(dir, opts(RecoveryMode::PointInTime), 1).unwrap();
    assert_eq!(seen.len(), 4);
    assert_eq!(report.segments_replayed, vec![1, 2]);
    assert!(
        report
            .stopped_early
            .unwrap()
            .contains("segment 3 is missing")
    );
    assert!(dir.join("000004.log.discarded").exists());
    assert_eq!(wal.current_segment(), 3);
}

#[test]
fn set_aside_never_overwrites_an_earlier_discarded_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_log(dir, 2, 2);
    std::fs::write(dir.join("000002.log.discarded"), b"older").unwrap();
    flip(&seg(dir, 2), 3);
    let (_wal, report, _) = open_collect(dir, opts(RecoveryMode::PointInTime), 1).unwrap();
    assert!(
        report
            .stopped_early
            .unwrap()
            .contains("000002.log.discarded.1")
    );
    assert_eq!(
        std::fs::read(dir.join("000002.log.discarded")).unwrap(),
        b"older"
    );
}
