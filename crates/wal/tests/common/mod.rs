//! Helpers shared by the WAL integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use riptide_wal::{RecoveryMode, ReplayReport, Result, SyncMode, Wal, WalOptions};

/// Options with the given recovery mode and no syncing (tests do not need durability).
pub fn opts(recovery_mode: RecoveryMode) -> WalOptions {
    WalOptions {
        sync_mode: SyncMode::None,
        recovery_mode,
        ..WalOptions::default()
    }
}

/// Replayed `(segment, payload)` pairs.
pub type Records = Vec<(u64, Vec<u8>)>;

/// Opens the WAL and collects every replayed `(segment, payload)`.
pub fn open_collect(
    dir: &Path,
    opts: WalOptions,
    min_segment: u64,
) -> Result<(Wal, ReplayReport, Records)> {
    let mut seen = Vec::new();
    let (wal, report) = Wal::open(dir, opts, min_segment, |seg, p| {
        seen.push((seg, p.to_vec()));
        Ok(())
    })?;
    Ok((wal, report, seen))
}

/// Path of segment `n` in `dir`.
pub fn seg(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.log"))
}

/// A deterministic payload for record `i`.
pub fn payload(i: usize) -> Vec<u8> {
    let len = (i * 37) % 300;
    (0..len).map(|j| (i.wrapping_mul(31) + j) as u8).collect()
}

/// Writes `per_segment` records in each of `segments` segments (rotating in between),
/// starting at segment 1, and closes. Returns the payloads in order.
pub fn write_log(dir: &Path, segments: usize, per_segment: usize) -> Vec<Vec<u8>> {
    let (wal, _) = Wal::open(dir, opts(RecoveryMode::TolerateCorruptedTail), 1, |_, _| {
        panic!("expected an empty directory")
    })
    .unwrap();
    let mut all = Vec::new();
    for s in 0..segments {
        if s > 0 {
            wal.rotate().unwrap();
        }
        for _ in 0..per_segment {
            let p = payload(all.len());
            wal.append(&p).unwrap();
            all.push(p);
        }
    }
    wal.close().unwrap();
    all
}

/// Offsets at which each record of a segment starts, and the file length, for records of
/// the given payload lengths.
pub fn record_offsets(payload_lens: &[usize]) -> Vec<u64> {
    let mut off = riptide_wal::SEGMENT_HEADER_LEN as u64;
    let mut out = vec![off];
    for &l in payload_lens {
        off += (riptide_wal::RECORD_HEADER_LEN + l) as u64;
        out.push(off);
    }
    out
}

/// Flips one bit of the byte at `offset` in `path`.
pub fn flip(path: &Path, offset: u64) {
    let mut b = std::fs::read(path).unwrap();
    b[offset as usize] ^= 0x04;
    std::fs::write(path, b).unwrap();
}

/// Cuts `path` to `len` bytes.
pub fn cut(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}
