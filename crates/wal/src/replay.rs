//! Replay of the segments found at open, and recovery from damage per [`RecoveryMode`].

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use riptide_common::fs::{FileSystem, ReadAtCursor};
use riptide_common::{Error, IoResultExt, Result};

use crate::format::{
    HeaderProblem, RECORD_HEADER_LEN, RECORD_TYPE_FULL, RecordHeader, SEGMENT_HEADER_LEN, TailScan,
    check_segment_header, encode_segment_header, find_intact_record,
};
use crate::options::RecoveryMode;
use crate::segment::{list_segments, read_from, rewrite_header, set_aside, sync_dir, truncate};

/// What [`crate::Wal::open`] found and did while replaying.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Numbers of the segments whose records were replayed, in order (segments set aside by
    /// [`RecoveryMode::PointInTime`] are not listed).
    pub segments_replayed: Vec<u64>,
    /// Number of records handed to the callback.
    pub records: u64,
    /// Total payload bytes handed to the callback (record headers not counted).
    pub bytes: u64,
    /// The segment that recovery truncated, and the length it was cut to (the offset of the
    /// first damaged byte), if any.
    pub tail_truncated: Option<(PathBuf, u64)>,
    /// The last segment, and the length it was cut to, when nothing but zeros followed its
    /// last record: space the writer reserved ahead of its records
    /// ([`crate::WalOptions::preallocate_bytes`]) and had not used when the process
    /// stopped. Not damage, so not in `tail_truncated`, in any [`RecoveryMode`].
    pub unused_tail: Option<(PathBuf, u64)>,
    /// With [`RecoveryMode::PointInTime`]: why and where replay stopped early, and which
    /// segments were set aside.
    pub stopped_early: Option<String>,
}

/// The outcome of replay: the report and the number the new segment must get.
#[derive(Debug)]
pub(crate) struct Replayed {
    pub report: ReplayReport,
    pub next_segment: u64,
}

/// Damage found in one segment.
enum Damage {
    /// The segment header is missing, cut short or invalid; `seen` is what the read returned.
    Header {
        problem: HeaderProblem,
        seen: Vec<u8>,
    },
    /// The record starting at `offset` is damaged; every record before it was intact.
    /// `seen` holds the bytes of the damaged record as the scan read them (its header and
    /// payload, as far as they were read), for [`reread_agreeing`] to compare against.
    Record {
        offset: u64,
        reason: String,
        seen: Vec<u8>,
    },
}

/// How many payload bytes the torn-tail check may checksum while looking for an intact
/// record after the damage (bounds its worst case on a large tail of random bytes).
const TAIL_SCAN_BUDGET: usize = 1 << 30;

/// A callback that receives `(segment number, payload)` of every intact record.
pub(crate) type RecordFn<'a> = dyn FnMut(u64, &[u8]) -> Result<()> + 'a;

/// Replays every segment in `dir` numbered `>= min_segment`, applying `mode` to damage.
pub(crate) fn replay(
    fs: &dyn FileSystem,
    dir: &Path,
    mode: RecoveryMode,
    min_segment: u64,
    f: &mut RecordFn<'_>,
) -> Result<Replayed> {
    let all = list_segments(fs, dir)?;
    let todo: Vec<&(u64, PathBuf)> = all.iter().filter(|(n, _)| *n >= min_segment).collect();
    let mut report = ReplayReport::default();
    // PointInTime: (index in `todo` of the first segment to set aside, why replay stopped).
    let mut stop: Option<(usize, String)> = None;
    let mut prev: Option<u64> = None;

    for (i, &(n, path)) in todo.iter().enumerate() {
        let n = *n;
        if let Some(p) = prev
            && p.checked_add(1) != Some(n)
        {
            let msg = format!(
                "WAL segment {} is missing between {} and {} in {}",
                p.saturating_add(1),
                p,
                n,
                dir.display()
            );
            if mode == RecoveryMode::PointInTime {
                stop = Some((i, msg));
                break;
            }
            return Err(Error::corruption(msg));
        }
        prev = Some(n);
        let is_last = i + 1 == todo.len();
        let Some(damage) = scan_segment(fs, path, n, f, &mut report)? else {
            report.segments_replayed.push(n);
            continue;
        };
        match damage {
            Damage::Header { problem, seen } => {
                let what = format!("WAL segment {}: {problem} (offset 0)", path.display());
                match mode {
                    RecoveryMode::AbsoluteConsistency => return Err(Error::corruption(what)),
                    RecoveryMode::PointInTime => {
                        stop = Some((i, what));
                        break;
                    }
                    RecoveryMode::TolerateCorruptedTail => {
                        if !is_last {
                            return Err(Error::corruption(format!(
                                "{what}; it is not the last segment, so this is not a torn tail"
                            )));
                        }
                        if !header_is_torn(fs, path, n, &seen)? {
                            return Err(Error::corruption(what));
                        }
                        log::warn!("{what}: torn segment creation, rewriting an empty header");
                        rewrite_header(fs, path, n)?;
                        report.tail_truncated = Some((path.clone(), 0));
                        report.segments_replayed.push(n);
                    }
                }
            }
            Damage::Record {
                offset,
                reason,
                seen,
            } => {
                let what = format!(
                    "WAL segment {}: {reason} at offset {offset}",
                    path.display()
                );
                // Only the last segment can end in reserved zeros: rotation cuts them off.
                let rest = if is_last {
                    Some(reread_agreeing(fs, path, offset, &seen)?)
                } else {
                    None
                };
                if let Some(rest) = &rest
                    && rest.iter().all(|&b| b == 0)
                {
                    log::info!(
                        "WAL segment {}: the {} bytes after its last record (offset {offset}) \
                         are zeros the writer reserved ahead of its records; cutting them off",
                        path.display(),
                        rest.len()
                    );
                    truncate(fs, path, offset)?;
                    report.unused_tail = Some((path.clone(), offset));
                    report.segments_replayed.push(n);
                    continue;
                }
                match mode {
                    RecoveryMode::AbsoluteConsistency => return Err(Error::corruption(what)),
                    RecoveryMode::PointInTime => {
                        reread_agreeing(fs, path, offset, &seen)?;
                        truncate(fs, path, offset)?;
                        report.tail_truncated = Some((path.clone(), offset));
                        report.segments_replayed.push(n);
                        stop = Some((
                            i + 1,
                            format!("{what}; truncated the segment to {offset} bytes"),
                        ));
                        break;
                    }
                    RecoveryMode::TolerateCorruptedTail => {
                        if !is_last {
                            return Err(Error::corruption(format!(
                                "{what}; it is not the last segment (segments are fsynced \
                                 when rotated), so this is not a torn tail"
                            )));
                        }
                        let rest = match rest {
                            Some(rest) => rest,
                            None => reread_agreeing(fs, path, offset, &seen)?,
                        };
                        match find_intact_record(&rest, 1, TAIL_SCAN_BUDGET) {
                            TailScan::NotFound => {}
                            TailScan::Found(o) => {
                                return Err(Error::corruption(format!(
                                    "{what}; an intact record follows at offset {}, so this \
                                     is not a torn tail",
                                    offset.saturating_add(o as u64)
                                )));
                            }
                            TailScan::GaveUp => {
                                return Err(Error::corruption(format!(
                                    "{what}; the {} bytes after it could not be ruled out as \
                                     holding intact records, so this is not treated as a torn \
                                     tail (PointInTime recovery would cut it off)",
                                    rest.len()
                                )));
                            }
                        }
                        log::warn!("{what}: torn tail, truncating the segment to {offset} bytes");
                        truncate(fs, path, offset)?;
                        report.tail_truncated = Some((path.clone(), offset));
                        report.segments_replayed.push(n);
                    }
                }
            }
        }
    }

    let mut set_aside_nums = Vec::new();
    if let Some((from, why)) = stop {
        let mut moved = Vec::new();
        for &(n, path) in todo.iter().skip(from) {
            moved.push(set_aside(fs, path)?.display().to_string());
            set_aside_nums.push(*n);
        }
        if !moved.is_empty() {
            sync_dir(fs, dir)?;
        }
        let why = if moved.is_empty() {
            why
        } else {
            format!("{why}; set aside {}", moved.join(", "))
        };
        log::warn!("point-in-time recovery stopped early: {why}");
        report.stopped_early = Some(why);
    }

    let max_kept = all
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !set_aside_nums.contains(n))
        .max();
    let next_segment = match max_kept {
        Some(m) => m
            .checked_add(1)
            .ok_or_else(|| Error::corruption(format!("WAL segment number {m} is the maximum")))?
            .max(min_segment),
        None => min_segment,
    };
    Ok(Replayed {
        report,
        next_segment,
    })
}

/// Replays the records of one segment. Returns the first damage found, if any; every
/// record before it was handed to `f`.
fn scan_segment(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    f: &mut RecordFn<'_>,
    report: &mut ReplayReport,
) -> Result<Option<Damage>> {
    let file = fs.open_read(path).at("open WAL segment", path)?;
    let len = file.len().at("stat WAL segment", path)?;
    let mut r = BufReader::with_capacity(256 << 10, ReadAtCursor::new(file, 0, len));

    let header_len = len.min(SEGMENT_HEADER_LEN as u64) as usize;
    let mut header = vec![0u8; header_len];
    r.read_exact(&mut header)
        .at("read header of WAL segment", path)?;
    if let Err(problem) = check_segment_header(&header, number) {
        if problem.is_unsupported() {
            return Err(Error::not_supported(format!(
                "WAL segment {}: {problem} (offset 0)",
                path.display()
            )));
        }
        return Ok(Some(Damage::Header {
            problem,
            seen: header,
        }));
    }

    let mut pos = SEGMENT_HEADER_LEN as u64;
    let mut payload = Vec::new();
    let mut hdr = [0u8; RECORD_HEADER_LEN];
    loop {
        let left = len.saturating_sub(pos);
        if left == 0 {
            return Ok(None);
        }
        if left < RECORD_HEADER_LEN as u64 {
            return Ok(Some(Damage::Record {
                offset: pos,
                reason: format!(
                    "record header cut short by end of file ({left} of {RECORD_HEADER_LEN} bytes)"
                ),
                seen: Vec::new(),
            }));
        }
        r.read_exact(&mut hdr)
            .at(&format!("read record header at offset {pos} of"), path)?;
        let Some(h) = RecordHeader::decode(&hdr) else {
            return Ok(Some(Damage::Record {
                offset: pos,
                reason: "undecodable record header".to_string(),
                seen: hdr.to_vec(),
            }));
        };
        let plen = u64::from(h.len);
        let room = left - RECORD_HEADER_LEN as u64;
        let Some(plen_usize) = usize::try_from(plen).ok().filter(|_| plen <= room) else {
            return Ok(Some(Damage::Record {
                offset: pos,
                reason: format!(
                    "record of {plen} payload bytes runs past end of file ({room} bytes left)"
                ),
                seen: hdr.to_vec(),
            }));
        };
        payload.resize(plen_usize, 0);
        r.read_exact(&mut payload)
            .at(&format!("read record payload at offset {pos} of"), path)?;
        if !h.matches(&payload) {
            let zero = h.checksum == 0 && h.len == 0 && h.kind == 0;
            let mut seen = hdr.to_vec();
            seen.extend_from_slice(&payload);
            return Ok(Some(Damage::Record {
                offset: pos,
                seen,
                reason: if zero {
                    "zero-filled record header".to_string()
                } else {
                    "record checksum mismatch".to_string()
                },
            }));
        }
        if h.kind != RECORD_TYPE_FULL {
            return Err(Error::not_supported(format!(
                "WAL segment {}: unknown record type {} at offset {pos}",
                path.display(),
                h.kind
            )));
        }
        f(number, &payload).map_err(|e| {
            e.with_context(format!(
                "replaying the record at offset {pos} of WAL segment {}",
                path.display()
            ))
        })?;
        report.records += 1;
        report.bytes += plen;
        pos += RECORD_HEADER_LEN as u64 + plen;
    }
}

/// Reads `path` from `offset` to its end twice, and returns the bytes if both reads agree
/// with each other and with `seen`, what the replay scan read at `offset`. Recovery calls
/// it before it cuts anything off: damage it would cut must be on disk, not a read that
/// returned corrupted bytes once (a transient fault), which would destroy acknowledged
/// records. If the reads differ, the open fails with an I/O error naming the file and the
/// offset, and nothing is changed.
fn reread_agreeing(fs: &dyn FileSystem, path: &Path, offset: u64, seen: &[u8]) -> Result<Vec<u8>> {
    let first = read_from(fs, path, offset)?;
    let differs = if !first.starts_with(seen) {
        Some("the replay scan")
    } else if read_from(fs, path, offset)? != first {
        Some("the first re-read")
    } else {
        None
    };
    match differs {
        None => Ok(first),
        Some(which) => Err(Error::io(
            format!(
                "WAL segment {}: damage at offset {offset} not confirmed: a re-read returned \
                 other bytes than {which} (an unreliable read, not damage on disk?); nothing \
                 was truncated, open again to retry",
                path.display()
            ),
            std::io::Error::other("reads of the same bytes disagree"),
        )),
    }
}

/// True when a damaged header of segment `n` is a torn segment creation: the file holds a
/// strict prefix of the header that would have been written, or nothing but zeros. `seen`
/// is what the replay scan read of the header; the file is re-read (see
/// [`reread_agreeing`]) before the verdict.
fn header_is_torn(fs: &dyn FileSystem, path: &Path, n: u64, seen: &[u8]) -> Result<bool> {
    let bytes = reread_agreeing(fs, path, 0, seen)?;
    let expected = encode_segment_header(n);
    Ok(bytes.iter().all(|&b| b == 0)
        || (bytes.len() < expected.len() && expected.starts_with(&bytes)))
}
