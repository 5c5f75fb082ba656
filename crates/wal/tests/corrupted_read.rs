//! A read that returns corrupted bytes during replay (the file itself is intact) is not
//! taken for damage on disk: recovery re-reads before it truncates, and when the reads
//! disagree the open fails with `Io` naming the segment and offset, and changes nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::path::Path;

use common::opts;
use riptide_common::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide_wal::{ErrorKind, RecoveryMode, Wal};

/// Opens the WAL in `/wal` on `fs`, returning the payloads replayed.
fn open(fs: &FaultFs, mode: RecoveryMode) -> riptide_wal::Result<(Wal, Vec<Vec<u8>>)> {
    let mut seen = Vec::new();
    let (wal, report) = Wal::open_in(fs.as_dyn(), Path::new("/wal"), opts(mode), 1, |_, p| {
        seen.push(p.to_vec());
        Ok(())
    })?;
    assert_eq!(report.tail_truncated, None, "{report:?}");
    assert_eq!(report.stopped_early, None, "{report:?}");
    Ok((wal, seen))
}

#[test]
fn a_corrupted_read_at_replay_truncates_nothing() {
    let records = vec![b"small".to_vec(), vec![b'x'; 8 << 10]];
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::PointInTime,
    ] {
        let mut refused = 0;
        for seed in 0..16 {
            let what = format!("{mode:?} seed {seed}");
            let fs = FaultFs::new(seed);
            let (wal, seen) = open(&fs, mode).unwrap();
            assert!(seen.is_empty());
            for r in &records {
                wal.append(r).unwrap();
            }
            wal.close().unwrap();
            drop(wal);
            let segment = Path::new("/wal/000001.log");
            let before = fs.file_content(segment).unwrap();

            // One read of the segment flips a bit somewhere in it (most likely in the big
            // last record, which then looks like a torn tail).
            fs.add_rule(
                FaultRule::new(FsOp::Read, Fault::CorruptRead)
                    .on_files_ending_with(".log")
                    .times(1),
            );
            match open(&fs, mode) {
                Ok((wal, seen)) => {
                    assert_eq!(seen, records, "{what}");
                    wal.close().unwrap();
                }
                Err(e) => {
                    let msg = e.to_string();
                    assert!(msg.contains("/wal/000001.log"), "{what}: {msg}");
                    if msg.contains("not confirmed") {
                        assert_eq!(e.kind(), ErrorKind::Io, "{what}: {msg}");
                        assert!(msg.contains("at offset "), "{what}: {msg}");
                        refused += 1;
                    }
                    assert_eq!(fs.file_content(segment).unwrap(), before, "{what}: changed");
                }
            }
            assert_eq!(fs.injected_faults(), 1, "{what}");
            fs.clear_rules();
            let (wal, seen) = open(&fs, mode).unwrap();
            assert_eq!(seen, records, "{what}: after the fault");
            wal.close().unwrap();
        }
        assert!(
            refused >= 8,
            "{mode:?}: the flip hit the last record in {refused} of 16"
        );
    }
}
