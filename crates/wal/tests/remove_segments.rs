//! Obsolete segments are removed, the current one never.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{open_collect, opts, seg};
use riptide_wal::{ErrorKind, RecoveryMode};

#[test]
fn removes_below_but_never_the_current_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (wal, _, _) = open_collect(dir, opts(RecoveryMode::default()), 1).unwrap();
    for i in 0..4u8 {
        wal.append(&[i; 10]).unwrap();
        wal.rotate().unwrap();
    }
    assert_eq!(wal.current_segment(), 5);
    std::fs::write(dir.join("000001.log.discarded"), b"keep me").unwrap();

    assert_eq!(wal.remove_segments_below(3).unwrap(), 2);
    assert!(!seg(dir, 1).exists() && !seg(dir, 2).exists());
    assert!(seg(dir, 3).exists());
    assert_eq!(wal.remove_segments_below(3).unwrap(), 0);
    assert_eq!(wal.remove_segments_below(100).unwrap(), 2);
    assert!(seg(dir, 5).exists(), "the current segment must stay");
    assert!(dir.join("000001.log.discarded").exists());
    wal.append(b"still writable").unwrap();
    wal.close().unwrap();
    let e = wal.remove_segments_below(10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
    drop(wal);

    let (wal, report, seen) =
        open_collect(dir, opts(RecoveryMode::AbsoluteConsistency), 5).unwrap();
    assert_eq!(report.segments_replayed, vec![5]);
    assert_eq!(seen, vec![(5, b"still writable".to_vec())]);
    assert_eq!(wal.current_segment(), 6);
}
