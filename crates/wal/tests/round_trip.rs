//! Many records across rotations come back in order, from the right segments.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::time::Duration;

use common::{open_collect, opts, payload, seg};
use riptide_wal::{RecoveryMode, SyncMode, Wal, WalOptions};

#[test]
fn many_records_across_rotations_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nested/wal");
    let (wal, report, seen) =
        open_collect(&dir, opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert!(seen.is_empty());
    assert_eq!(report.records, 0);
    assert_eq!(wal.current_segment(), 1);

    let mut expected = Vec::new();
    let mut bytes = 0u64;
    for i in 0..3000 {
        if i > 0 && i % 400 == 0 {
            let n = wal.rotate().unwrap();
            assert_eq!(n, wal.current_segment());
        }
        let p = payload(i);
        wal.append(&p).unwrap();
        bytes += (riptide_wal::RECORD_HEADER_LEN + p.len()) as u64;
        expected.push((wal.current_segment(), p));
    }
    wal.append(b"").unwrap();
    expected.push((wal.current_segment(), Vec::new()));
    let stats = wal.stats();
    assert_eq!(stats.records_written, 3001);
    assert_eq!(
        stats.bytes_written,
        bytes + riptide_wal::RECORD_HEADER_LEN as u64
    );
    assert_eq!(stats.segments_created, 8);
    assert_eq!(wal.current_segment(), 8);
    wal.close().unwrap();

    let (wal, report, seen) =
        open_collect(&dir, opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert_eq!(seen, expected);
    assert_eq!(report.segments_replayed, (1..=8).collect::<Vec<_>>());
    assert_eq!(report.records, 3001);
    assert_eq!(
        report.bytes,
        expected.iter().map(|(_, p)| p.len() as u64).sum::<u64>()
    );
    assert_eq!(report.tail_truncated, None);
    assert_eq!(report.stopped_early, None);
    assert_eq!(wal.current_segment(), 9);
    assert!(seg(&dir, 9).exists());
    drop(wal);

    // min_segment skips older segments.
    let (wal, report, seen) =
        open_collect(&dir, opts(RecoveryMode::AbsoluteConsistency), 5).unwrap();
    let tail: Vec<_> = expected.iter().filter(|(s, _)| *s >= 5).cloned().collect();
    assert_eq!(seen, tail);
    assert_eq!(report.segments_replayed, (5..=9).collect::<Vec<_>>());
    assert_eq!(wal.current_segment(), 10);
    drop(wal);

    // min_segment beyond every existing segment: the new segment is min_segment.
    let (wal, report, seen) =
        open_collect(&dir, opts(RecoveryMode::AbsoluteConsistency), 42).unwrap();
    assert!(seen.is_empty());
    assert!(report.segments_replayed.is_empty());
    assert_eq!(wal.current_segment(), 42);
}

#[test]
fn full_sync_mode_syncs_every_append() {
    let tmp = tempfile::tempdir().unwrap();
    let (wal, _) = Wal::open(tmp.path(), WalOptions::default(), 1, |_, _| Ok(())).unwrap();
    for i in 0..5 {
        wal.append(&payload(i)).unwrap();
    }
    assert_eq!(wal.stats().syncs, 5);
    wal.sync().unwrap(); // nothing new: no extra fsync
    assert_eq!(wal.stats().syncs, 5);
    wal.close().unwrap();
}

#[test]
fn none_sync_mode_syncs_on_request_rotate_and_close() {
    let tmp = tempfile::tempdir().unwrap();
    let (wal, _, _) = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap();
    wal.append(b"a").unwrap();
    assert_eq!(wal.stats().syncs, 0);
    wal.sync().unwrap();
    assert_eq!(wal.stats().syncs, 1);
    wal.sync().unwrap();
    assert_eq!(wal.stats().syncs, 1);
    wal.append(b"b").unwrap();
    wal.rotate().unwrap();
    assert_eq!(wal.stats().syncs, 2);
    wal.close().unwrap();
    assert_eq!(wal.stats().syncs, 3);
}

#[test]
fn interval_sync_mode_syncs_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let o = WalOptions {
        sync_mode: SyncMode::Interval(Duration::from_millis(10)),
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    wal.append(b"hello").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while wal.stats().syncs == 0 {
        assert!(std::time::Instant::now() < deadline, "no background sync");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Nothing written since: no more syncs.
    let syncs = wal.stats().syncs;
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(wal.stats().syncs, syncs);
    wal.close().unwrap();

    let zero = WalOptions {
        sync_mode: SyncMode::Interval(Duration::ZERO),
        ..WalOptions::default()
    };
    let e = Wal::open(tmp.path(), zero, 1, |_, _| Ok(())).unwrap_err();
    assert_eq!(e.kind(), riptide_wal::ErrorKind::InvalidArgument);
}

#[test]
fn wal_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Wal>();
    check::<riptide_wal::GroupCommit<Vec<u8>>>();
}
