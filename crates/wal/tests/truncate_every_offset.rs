//! Truncating a small 3-segment log at every byte offset never panics, and each recovery
//! mode either recovers exactly the intact prefix or reports `Corruption`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::path::Path;

use common::{cut, open_collect, opts, record_offsets, seg};
use riptide_wal::{ErrorKind, RecoveryMode, SEGMENT_HEADER_LEN};

const SEGMENTS: usize = 3;
const PER_SEGMENT: usize = 3;
const MODES: [RecoveryMode; 3] = [
    RecoveryMode::TolerateCorruptedTail,
    RecoveryMode::AbsoluteConsistency,
    RecoveryMode::PointInTime,
];

/// The template log: the payloads, and per segment its record boundaries (the header end,
/// then the end of each record; the last one is the file length).
struct Template {
    dir: tempfile::TempDir,
    payloads: Vec<Vec<u8>>,
    bounds: Vec<Vec<u64>>,
}

fn template() -> Template {
    let dir = tempfile::tempdir().unwrap();
    // Keep it small: short payloads.
    let (wal, _, _) = open_collect(dir.path(), opts(RecoveryMode::default()), 1).unwrap();
    let mut payloads = Vec::new();
    let mut bounds = Vec::new();
    for s in 0..SEGMENTS {
        if s > 0 {
            wal.rotate().unwrap();
        }
        let mut lens = Vec::new();
        for r in 0..PER_SEGMENT {
            let p: Vec<u8> = (0..(s * 3 + r) as u8 % 5).map(|b| b + 1).collect();
            wal.append(&p).unwrap();
            lens.push(p.len());
            payloads.push(p);
        }
        bounds.push(record_offsets(&lens));
    }
    wal.close().unwrap();
    drop(wal);
    for (i, b) in bounds.iter().enumerate() {
        let len = std::fs::metadata(seg(dir.path(), i as u64 + 1))
            .unwrap()
            .len();
        assert_eq!(*b.last().unwrap(), len);
    }
    // The open above created segment 1 only; the template must not contain an extra one.
    assert!(!seg(dir.path(), SEGMENTS as u64 + 1).exists());
    Template {
        dir,
        payloads,
        bounds,
    }
}

fn copy_log(from: &Path, to: &Path) {
    for n in 1..=SEGMENTS as u64 {
        std::fs::copy(seg(from, n), seg(to, n)).unwrap();
    }
}

/// Expected outcome of cutting segment `k` (0-based) to `l` bytes.
struct Cut {
    /// Records in the segments before `k` and the intact records of `k` before the cut.
    prefix: usize,
    /// Records of segment `k` lost to the cut.
    lost: usize,
    /// The cut is at a record boundary (after a complete header).
    at_boundary: bool,
    /// Largest record boundary <= l (0 if l is inside the header).
    good_len: u64,
}

fn expect(t: &Template, k: usize, l: u64) -> Cut {
    let b = &t.bounds[k];
    let whole = b.iter().skip(1).filter(|&&end| end <= l).count();
    let good_len = if l < SEGMENT_HEADER_LEN as u64 {
        0
    } else {
        *b.iter().rfind(|&&x| x <= l).unwrap()
    };
    Cut {
        prefix: k * PER_SEGMENT + whole,
        lost: PER_SEGMENT - whole,
        at_boundary: l >= SEGMENT_HEADER_LEN as u64 && b.contains(&l),
        good_len,
    }
}

fn payloads(seen: &[(u64, Vec<u8>)]) -> Vec<Vec<u8>> {
    seen.iter().map(|(_, p)| p.clone()).collect()
}

/// After any successful recovery the directory must be clean for the strictest mode.
fn reopen_clean(dir: &Path, expected: &[Vec<u8>]) {
    let (_wal, report, seen) = open_collect(dir, opts(RecoveryMode::AbsoluteConsistency), 1)
        .unwrap_or_else(|e| panic!("reopen after recovery not clean: {e}"));
    assert_eq!(payloads(&seen), expected);
    assert_eq!(report.tail_truncated, None);
    assert_eq!(report.stopped_early, None);
}

#[test]
fn cut_log_recovers_a_prefix_or_reports_corruption() {
    let t = template();
    let mut cases = 0;
    for k in 0..SEGMENTS {
        let seg_len = *t.bounds[k].last().unwrap();
        for l in 0..seg_len {
            let c = expect(&t, k, l);
            for mode in MODES {
                // The log as a crash would leave it: segment k cut, no later segment.
                let tmp = tempfile::tempdir().unwrap();
                let dir = tmp.path();
                copy_log(t.dir.path(), dir);
                cut(&seg(dir, k as u64 + 1), l);
                for later in k + 2..=SEGMENTS {
                    std::fs::remove_file(seg(dir, later as u64)).unwrap();
                }
                let ctx = format!("segment {} cut at {l}, {mode:?}", k + 1);
                let res = open_collect(dir, opts(mode), 1);
                let expected = t.payloads[..c.prefix].to_vec();
                match mode {
                    RecoveryMode::AbsoluteConsistency if !c.at_boundary => {
                        let e = res.err().unwrap_or_else(|| panic!("{ctx}: accepted"));
                        assert_eq!(e.kind(), ErrorKind::Corruption, "{ctx}: {e}");
                        assert!(e.to_string().contains(&format!("{:06}.log", k + 1)), "{e}");
                    }
                    _ => {
                        let (wal, report, seen) = res.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                        assert_eq!(payloads(&seen), expected, "{ctx}");
                        if c.at_boundary {
                            assert_eq!(report.tail_truncated, None, "{ctx}");
                            assert_eq!(report.stopped_early, None, "{ctx}");
                        } else if mode == RecoveryMode::PointInTime && l < SEGMENT_HEADER_LEN as u64
                        {
                            assert!(report.stopped_early.is_some(), "{ctx}");
                            assert!(
                                dir.join(format!("{:06}.log.discarded", k + 1)).exists(),
                                "{ctx}"
                            );
                        } else {
                            let path = seg(dir, k as u64 + 1);
                            assert_eq!(
                                report.tail_truncated,
                                Some((path.clone(), c.good_len)),
                                "{ctx}"
                            );
                            let len = std::fs::metadata(&path).unwrap().len();
                            let want = if c.good_len == 0 {
                                SEGMENT_HEADER_LEN as u64 // header rewritten
                            } else {
                                c.good_len
                            };
                            assert_eq!(len, want, "{ctx}");
                        }
                        drop(wal);
                        reopen_clean(dir, &expected);
                    }
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 500, "{cases}");
}

#[test]
fn cut_middle_segment_with_later_segments_present() {
    let t = template();
    for k in 0..SEGMENTS - 1 {
        let seg_len = *t.bounds[k].last().unwrap();
        for l in 0..seg_len {
            let c = expect(&t, k, l);
            for mode in MODES {
                let tmp = tempfile::tempdir().unwrap();
                let dir = tmp.path();
                copy_log(t.dir.path(), dir);
                cut(&seg(dir, k as u64 + 1), l);
                let ctx = format!("segment {} cut at {l}, later kept, {mode:?}", k + 1);
                let res = open_collect(dir, opts(mode), 1);
                if c.at_boundary {
                    // Indistinguishable from a segment rotated early: everything else replays.
                    let (_wal, report, seen) = res.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    let mut expected = t.payloads.clone();
                    expected.drain(c.prefix..c.prefix + c.lost);
                    assert_eq!(payloads(&seen), expected, "{ctx}");
                    assert_eq!(report.tail_truncated, None, "{ctx}");
                    continue;
                }
                match mode {
                    RecoveryMode::PointInTime => {
                        let (wal, report, seen) = res.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                        let expected = t.payloads[..c.prefix].to_vec();
                        assert_eq!(payloads(&seen), expected, "{ctx}");
                        let why = report.stopped_early.unwrap();
                        assert!(why.contains(&format!("{:06}.log", k + 1)), "{ctx}: {why}");
                        for later in k + 2..=SEGMENTS {
                            assert!(
                                dir.join(format!("{later:06}.log.discarded")).exists(),
                                "{ctx}"
                            );
                        }
                        drop(wal);
                        reopen_clean(dir, &expected);
                    }
                    _ => {
                        let e = res.err().unwrap_or_else(|| panic!("{ctx}: accepted"));
                        assert_eq!(e.kind(), ErrorKind::Corruption, "{ctx}: {e}");
                        let msg = e.to_string();
                        assert!(msg.contains(&format!("{:06}.log", k + 1)), "{ctx}: {msg}");
                        if l >= SEGMENT_HEADER_LEN as u64 {
                            assert!(
                                msg.contains(&format!("offset {}", c.good_len)),
                                "{ctx}: {msg}"
                            );
                        }
                    }
                }
            }
        }
    }
}
