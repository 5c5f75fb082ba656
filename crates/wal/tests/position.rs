//! `Wal::position`: the end of the records of the current segment, at a record boundary,
//! whatever zeros are reserved past it; a copy of the file cut there replays exactly the
//! records appended before the position was taken (what an online checkpoint copies).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{open_collect, payload, record_offsets, seg};
use riptide_wal::{RecoveryMode, SEGMENT_HEADER_LEN, SyncMode, Wal, WalOptions, WalPosition};

#[test]
fn a_prefix_cut_at_the_position_replays_exactly_the_records_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Full sync reserves zeros ahead of the records: the file is longer than its records.
    let opts = WalOptions {
        sync_mode: SyncMode::Full,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(dir, opts, 1, |_, _| Ok(())).unwrap();
    let header = SEGMENT_HEADER_LEN as u64;
    assert_eq!(
        wal.position(),
        WalPosition {
            segment: 1,
            offset: header
        }
    );
    let before: Vec<Vec<u8>> = (0..5).map(payload).collect();
    for p in &before {
        wal.append(p).unwrap();
    }
    let lens: Vec<usize> = before.iter().map(Vec::len).collect();
    let at = wal.position();
    assert_eq!(at.segment, 1);
    assert_eq!(at.offset, record_offsets(&lens)[5]);
    assert!(std::fs::metadata(seg(dir, 1)).unwrap().len() > at.offset);
    // Appended after the position: not in the cut copy.
    wal.append(&payload(99)).unwrap();

    let copy = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(seg(dir, 1)).unwrap();
    std::fs::write(seg(copy.path(), 1), &bytes[..at.offset as usize]).unwrap();
    let strict = common::opts(RecoveryMode::AbsoluteConsistency);
    let (_copy_wal, report, seen) = open_collect(copy.path(), strict, 1).unwrap();
    assert_eq!(report.tail_truncated, None);
    assert_eq!(
        seen,
        before.iter().map(|p| (1, p.clone())).collect::<Vec<_>>()
    );

    // A rotation moves the position to the new segment's header.
    assert_eq!(wal.rotate().unwrap(), 2);
    assert_eq!(
        wal.position(),
        WalPosition {
            segment: 2,
            offset: header
        }
    );
    wal.close().unwrap();
}
