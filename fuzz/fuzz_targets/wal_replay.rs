//! `wal_replay`: arbitrary bytes as WAL segment files, replayed by `riptide_wal::Wal::open`
//! in every recovery mode.
//!
//! Input: `mode: u8`, `split: u16 LE`, then the log bytes.
//! * mode bit 0: recompute the segment header checksums (and set the header's segment number
//!   to the file's) and the checksum of every record the framing reaches, so the fuzzer gets
//!   past the checksums to the recovery logic;
//! * mode bit 1: split the bytes at `split` into two consecutive segments (the second gets a
//!   header of its own when bit 0 is set);
//! * mode bits 2-3: the first segment's number (1, 2, 7 or 999999).
//!
//! For each recovery mode, in a fresh directory: `Wal::open` must return (errors are fine,
//! panics are bugs), each payload is decoded as a write batch like the engine does, and when
//! the open succeeds, a second open with `AbsoluteConsistency` must succeed and replay exactly
//! the same records (recovery leaves a clean log behind).

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use riptide_common::WriteBatch;
use riptide_fuzz::{fix_wal_checksums, temp_dir};
use riptide_wal::{RecoveryMode, SyncMode, Wal, WalOptions, segment_file_name};

/// Opens the WAL in `dir`, collecting `(segment, payload)` of every replayed record.
fn open(
    dir: &Path,
    mode: RecoveryMode,
    min_segment: u64,
) -> riptide_wal::Result<Vec<(u64, Vec<u8>)>> {
    let mut records = Vec::new();
    let opts = WalOptions {
        sync_mode: SyncMode::None,
        recovery_mode: mode,
        ..WalOptions::default()
    };
    let (wal, report) = Wal::open(dir, opts, min_segment, |seg, payload| {
        // What the engine does with every record; errors are the engine's to report.
        if let Ok(b) = WriteBatch::from_data(payload.to_vec()) {
            let _ = b.iter().count();
            let _ = b.marker();
        }
        records.push((seg, payload.to_vec()));
        Ok(())
    })?;
    assert_eq!(
        report.records,
        records.len() as u64,
        "report counts the records"
    );
    let bytes: u64 = records.iter().map(|(_, p)| p.len() as u64).sum();
    assert_eq!(report.bytes, bytes, "report counts the payload bytes");
    wal.close()?;
    Ok(records)
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        let mut seeds = Vec::new();
        let files = riptide_fuzz::engine_files();
        for (i, (_, seg)) in files.wal_segments.iter().enumerate() {
            seeds.push((format!("engine-{i}"), riptide_fuzz::with_prefix(&[1, 0, 0], seg)));
            seeds.push((format!("engine-raw-{i}"), riptide_fuzz::with_prefix(&[0, 0, 0], seg)));
        }
        let batches = riptide_fuzz::sample_batches();
        let seg = riptide_fuzz::wal_segment(&batches);
        seeds.push(("batches".into(), riptide_fuzz::with_prefix(&[1, 0, 0], &seg)));
        // Two segments: the split falls where the second one starts.
        let mut two = seg.clone();
        two.extend_from_slice(&riptide_fuzz::wal_segment(&batches[..2]));
        let split = u16::try_from(seg.len()).unwrap_or(u16::MAX).to_le_bytes();
        seeds.push(("two".into(), riptide_fuzz::with_prefix(&[3, split[0], split[1]], &two)));
        // A torn tail.
        let torn = &seg[..seg.len() - 3];
        seeds.push(("torn".into(), riptide_fuzz::with_prefix(&[0, 0, 0], torn)));
        seeds
    }),
    |data: &[u8]| {
    let [mode, s0, s1, rest @ ..] = data else {
        return;
    };
    let first = match (mode >> 2) & 3 {
        0 => 1,
        1 => 2,
        2 => 7,
        _ => 999_999,
    };
    let split = usize::from(u16::from_le_bytes([*s0, *s1]));
    let mut segments: Vec<(u64, Vec<u8>)> = if mode & 2 != 0 {
        let split = split.min(rest.len());
        vec![(first, rest[..split].to_vec()), (first + 1, rest[split..].to_vec())]
    } else {
        vec![(first, rest.to_vec())]
    };
    if mode & 1 != 0 {
        for (n, seg) in &mut segments {
            fix_wal_checksums(seg, *n);
        }
    }
    for recovery in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::AbsoluteConsistency,
        RecoveryMode::PointInTime,
    ] {
        let dir = temp_dir();
        for (n, seg) in &segments {
            std::fs::write(dir.path().join(segment_file_name(*n)), seg).expect("write segment");
        }
        let Ok(records) = open(dir.path(), recovery, 1) else {
            continue;
        };
        match open(dir.path(), RecoveryMode::AbsoluteConsistency, 1) {
            Ok(again) => assert_eq!(
                again, records,
                "{recovery:?}: a second open replays other records"
            ),
            Err(e) => panic!("{recovery:?}: the log recovery left behind does not open: {e}"),
        }
    }
}
);
