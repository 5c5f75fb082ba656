//! Records written into zeros reserved ahead of them (`WalOptions::preallocate_bytes`):
//! the file is longer than its records while written, rotation and close cut the zeros
//! off, and after a crash replay cuts them quietly and loses no synced record.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::path::Path;

use common::{open_collect, payload, record_offsets, seg};
use riptide_common::fs::{FaultFs, FileSystem};
use riptide_wal::{RecoveryMode, SEGMENT_HEADER_LEN, SyncMode, Wal, WalOptions};

/// Full sync, the default reservation.
fn full() -> WalOptions {
    WalOptions {
        sync_mode: SyncMode::Full,
        ..WalOptions::default()
    }
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn records_overwrite_reserved_zeros_and_rotation_and_close_cut_them_off() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (wal, _) = Wal::open(dir, full(), 1, |_, _| Ok(())).unwrap();
    let header = SEGMENT_HEADER_LEN as u64;
    // Nothing reserved before the first record; then 64 KiB at first.
    assert_eq!(len(&seg(dir, 1)), header);
    let small: Vec<Vec<u8>> = (0..3).map(payload).collect();
    for p in &small {
        wal.append(p).unwrap();
    }
    assert_eq!(len(&seg(dir, 1)), header + (64 << 10));
    // A record larger than what is reserved gets room for all of it.
    let big = vec![7u8; 200 << 10];
    wal.append(&big).unwrap();
    let lens: Vec<usize> = small.iter().map(Vec::len).chain([big.len()]).collect();
    let offs = record_offsets(&lens);
    assert!(len(&seg(dir, 1)) >= offs[4], "{}", len(&seg(dir, 1)));
    // The zeros are not counted as log bytes.
    assert_eq!(wal.stats().bytes_written, offs[4] - header);

    // Rotation ends the segment at its last record.
    assert_eq!(wal.rotate().unwrap(), 2);
    assert_eq!(len(&seg(dir, 1)), offs[4]);
    wal.append(b"in segment 2").unwrap();
    assert!(len(&seg(dir, 2)) > header + 64);
    // So does close.
    wal.close().unwrap();
    let seg2_len = header + (riptide_wal::RECORD_HEADER_LEN + 12) as u64;
    assert_eq!(len(&seg(dir, 2)), seg2_len);
    drop(wal);

    // The strictest mode sees a clean log.
    let strict = WalOptions {
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..full()
    };
    let (_wal, report, seen) = open_collect(dir, strict, 1).unwrap();
    let mut expected: Vec<(u64, Vec<u8>)> = small.iter().map(|p| (1, p.clone())).collect();
    expected.push((1, big));
    expected.push((2, b"in segment 2".to_vec()));
    assert_eq!(seen, expected);
    assert_eq!(report.tail_truncated, None);
    assert_eq!(report.unused_tail, None);
}

#[test]
fn without_syncing_nothing_is_reserved() {
    for o in [
        WalOptions {
            sync_mode: SyncMode::None,
            ..WalOptions::default()
        },
        WalOptions {
            preallocate_bytes: 0,
            ..full()
        },
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
        wal.append(b"hello").unwrap();
        assert_eq!(
            len(&seg(tmp.path(), 1)),
            SEGMENT_HEADER_LEN as u64 + 5 + riptide_wal::RECORD_HEADER_LEN as u64,
            "{o:?}"
        );
    }
}

#[test]
fn reservations_grow_with_the_segment_up_to_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let o = WalOptions {
        preallocate_bytes: 256 << 10,
        ..full()
    };
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    let record = vec![1u8; 1000];
    let mut ends = Vec::new();
    for _ in 0..2000 {
        wal.append(&record).unwrap();
        let l = len(&seg(tmp.path(), 1));
        if ends.last() != Some(&l) {
            ends.push(l);
        }
    }
    let steps: Vec<u64> = ends.windows(2).map(|w| w[1] - w[0]).collect();
    // 64 KiB first, then as much again as the segment holds, never more than 256 KiB.
    assert_eq!(ends[0], SEGMENT_HEADER_LEN as u64 + (64 << 10));
    assert!(steps.iter().all(|&s| s <= 256 << 10), "{steps:?}");
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
    assert_eq!(*steps.last().unwrap(), 256 << 10, "{steps:?}");
}

#[test]
fn a_crash_keeps_every_synced_record_and_replay_cuts_the_zeros_quietly() {
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
        RecoveryMode::PointInTime,
    ] {
        let fs = FaultFs::new(7);
        let dir = Path::new("/wal");
        let o = WalOptions {
            recovery_mode: mode,
            ..full()
        };
        let (wal, _) = Wal::open_in(fs.as_dyn(), dir, o, 1, |_, _| Ok(())).unwrap();
        let payloads: Vec<Vec<u8>> = (0..50).map(payload).collect();
        for p in &payloads {
            wal.append(p).unwrap();
        }
        // A power loss: only what was synced survives, the reserved zeros with it.
        let after = fs.crash();
        drop(wal);
        let path = seg(dir, 1);
        let offs = record_offsets(&payloads.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(after.metadata(&path).unwrap().len > offs[50], "{mode:?}");
        let mut seen = Vec::new();
        let (wal, report) = Wal::open_in(after.as_dyn(), dir, o, 1, |_, p| {
            seen.push(p.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, payloads, "{mode:?}");
        assert_eq!(report.tail_truncated, None, "{mode:?}");
        assert_eq!(
            report.unused_tail,
            Some((path.clone(), offs[50])),
            "{mode:?}"
        );
        assert_eq!(after.metadata(&path).unwrap().len, offs[50], "{mode:?}");
        drop(wal);
    }
}
