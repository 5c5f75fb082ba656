//! A torn tail is cut off cleanly, the file truncated, and the WAL keeps working.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::io::Write;

use common::{cut, flip, open_collect, opts, record_offsets, seg, write_log};
use riptide_wal::{ErrorKind, RecoveryMode, Wal};

/// Checks recovery from a torn tail of segment 2 (whose records are `all[3..6]`), cut at
/// `good_len`: the prefix is replayed, the file truncated, a reopen is clean, and records
/// appended after the reopen replay too.
fn check_recovers(dir: &std::path::Path, all: &[Vec<u8>], kept: usize, good_len: u64) {
    let path = seg(dir, 2);
    let (wal, report, seen) =
        open_collect(dir, opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap();
    let payloads: Vec<_> = seen.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(payloads, all[..kept].to_vec());
    assert_eq!(report.tail_truncated, Some((path.clone(), good_len)));
    assert_eq!(report.segments_replayed, vec![1, 2]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
    assert_eq!(wal.current_segment(), 3);
    wal.append(b"after recovery").unwrap();
    wal.close().unwrap();
    drop(wal);

    let (_wal, report, seen) =
        open_collect(dir, opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert_eq!(report.tail_truncated, None);
    assert_eq!(report.segments_replayed, vec![1, 2, 3]);
    let mut expected: Vec<_> = all[..kept].to_vec();
    expected.push(b"after recovery".to_vec());
    assert_eq!(
        seen.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(seen.last().unwrap().0, 3);
}

fn seg2_offsets(all: &[Vec<u8>]) -> Vec<u64> {
    record_offsets(&all[3..6].iter().map(Vec::len).collect::<Vec<_>>())
}

#[test]
fn flipped_last_record_is_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    flip(&seg(tmp.path(), 2), offs[3] - 1);
    check_recovers(tmp.path(), &all, 5, offs[2]);
}

#[test]
fn flipped_checksum_of_last_record_is_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    flip(&seg(tmp.path(), 2), offs[2]);
    check_recovers(tmp.path(), &all, 5, offs[2]);
}

#[test]
fn last_record_cut_short_is_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    cut(&seg(tmp.path(), 2), offs[3] - 3);
    check_recovers(tmp.path(), &all, 5, offs[2]);
}

#[test]
fn last_record_header_cut_short_is_a_torn_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    cut(&seg(tmp.path(), 2), offs[2] + 5);
    check_recovers(tmp.path(), &all, 5, offs[2]);
}

#[test]
fn zero_filled_tail_is_cut_quietly_in_every_mode() {
    // Zeros after the last record hold no record: space the writer reserved ahead of its
    // records, or appends a power loss left as zeros. Cut off in every mode, and reported
    // as an unused tail, not as a torn one.
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
        RecoveryMode::PointInTime,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let all = write_log(tmp.path(), 2, 3);
        let offs = seg2_offsets(&all);
        let path = seg(tmp.path(), 2);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[0u8; 4096]).unwrap();
        drop(f);
        let (wal, report, seen) = open_collect(tmp.path(), opts(mode), 1).unwrap();
        assert_eq!(seen.len(), all.len(), "{mode:?}");
        assert_eq!(report.tail_truncated, None, "{mode:?}");
        assert_eq!(report.stopped_early, None, "{mode:?}");
        assert_eq!(
            report.unused_tail,
            Some((path.clone(), offs[3])),
            "{mode:?}"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), offs[3]);
        drop(wal);
    }
}

#[test]
fn zeros_after_a_segment_that_is_not_the_last_are_damage() {
    // Rotation cuts the reserved zeros off, so only the last segment may end in them.
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 2, 3);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(seg(tmp.path(), 1))
        .unwrap();
    f.write_all(&[0u8; 4096]).unwrap();
    drop(f);
    let e = open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("not the last segment"), "{e}");
}

#[test]
fn a_record_torn_before_reserved_zeros_is_a_torn_tail() {
    // A kill while a record was being written into reserved space: part of the record,
    // then zeros. That is a torn tail (warned about), not an unused one.
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    let path = seg(tmp.path(), 2);
    let last_record = std::fs::read(&path).unwrap()[offs[2] as usize..].to_vec();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&last_record[..last_record.len() / 2]).unwrap();
    f.write_all(&[0u8; 4096]).unwrap();
    drop(f);
    let (_wal, report, seen) =
        open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap();
    assert_eq!(seen.len(), all.len());
    assert_eq!(report.tail_truncated, Some((path.clone(), offs[3])));
    assert_eq!(report.unused_tail, None);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offs[3]);
}

#[test]
fn torn_segment_creation_is_repaired() {
    for len in [0u64, 1, 8, 31] {
        let tmp = tempfile::tempdir().unwrap();
        let all = write_log(tmp.path(), 2, 3);
        // A rotation torn after creating segment 3: part of its header is on disk.
        let (wal, _) =
            Wal::open(tmp.path(), opts(RecoveryMode::default()), 1, |_, _| Ok(())).unwrap();
        drop(wal);
        cut(&seg(tmp.path(), 3), len);
        let (wal, report, seen) =
            open_collect(tmp.path(), opts(RecoveryMode::TolerateCorruptedTail), 1).unwrap();
        assert_eq!(seen.len(), all.len());
        assert_eq!(report.tail_truncated, Some((seg(tmp.path(), 3), 0)));
        assert_eq!(report.segments_replayed, vec![1, 2, 3]);
        drop(wal);
        // The header was rewritten: even the strictest mode now sees a clean log.
        let (_wal, report, seen) =
            open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
        assert_eq!(seen.len(), all.len());
        assert_eq!(report.tail_truncated, None);
    }
}

#[test]
fn torn_tail_is_rejected_by_absolute_consistency() {
    let tmp = tempfile::tempdir().unwrap();
    let all = write_log(tmp.path(), 2, 3);
    let offs = seg2_offsets(&all);
    let path = seg(tmp.path(), 2);
    cut(&path, offs[3] - 1);
    let e = open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let msg = e.to_string();
    assert!(msg.contains("000002.log"), "{msg}");
    assert!(msg.contains(&format!("offset {}", offs[2])), "{msg}");
    // The file was left alone.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offs[3] - 1);
    // An empty last segment (torn creation) is damage too.
    let tmp = tempfile::tempdir().unwrap();
    write_log(tmp.path(), 1, 1);
    std::fs::File::create(seg(tmp.path(), 2)).unwrap();
    let e = open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("000002.log"), "{e}");
}
