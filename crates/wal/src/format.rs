//! The on-disk layout: segment file names, the segment header and record framing.
//!
//! Everything is little-endian. `FORMAT.md` in this crate describes it byte by byte.

use std::fmt;

use riptide_common::checksum::{checksum, checksum_parts};
use riptide_common::coding::{Decoder, put_u32_le, put_u64_le};

/// The first 8 bytes of every segment file.
pub const SEGMENT_MAGIC: [u8; 8] = *b"RIPTWAL\0";
/// The segment format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the segment header: magic 8, version 4, reserved 4, segment number 8, checksum 8.
pub const SEGMENT_HEADER_LEN: usize = 32;
/// Size of a record header: checksum 8, payload length 4, record type 1.
pub const RECORD_HEADER_LEN: usize = 13;
/// Record type of a record holding one whole payload (the only type written).
pub const RECORD_TYPE_FULL: u8 = 1;
/// The largest payload one record can hold.
pub const MAX_PAYLOAD_LEN: usize = u32::MAX as usize;

/// The file name of segment `n`: `format!("{n:06}.log")`.
pub fn segment_file_name(n: u64) -> String {
    format!("{n:06}.log")
}

/// The segment number named by `name`, if it is exactly what [`segment_file_name`] produces.
///
/// Anything else (`000007.log.discarded`, `7.log`, `0000007.log`) is not a segment.
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".log")?;
    if stem.len() < 6 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = stem.parse().ok()?;
    (segment_file_name(n) == name).then_some(n)
}

/// The 32-byte header that starts segment `number`.
pub fn encode_segment_header(number: u64) -> Vec<u8> {
    let mut buf = Vec::with_capacity(SEGMENT_HEADER_LEN);
    buf.extend_from_slice(&SEGMENT_MAGIC);
    put_u32_le(&mut buf, FORMAT_VERSION);
    put_u32_le(&mut buf, 0);
    put_u64_le(&mut buf, number);
    let sum = checksum(&buf);
    put_u64_le(&mut buf, sum);
    buf
}

/// Why a segment header was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderProblem {
    /// The file is shorter than a header.
    Short {
        /// The file's length.
        len: usize,
    },
    /// The file does not start with [`SEGMENT_MAGIC`]: not a WAL segment.
    BadMagic,
    /// The header's checksum does not match its bytes.
    BadChecksum,
    /// The header is intact but written by a format version this crate cannot read.
    UnsupportedVersion(u32),
    /// The header is intact but its reserved field is not zero (a newer format).
    UnsupportedFlags(u32),
    /// The header is intact but names another segment: the file was renamed or misplaced.
    WrongNumber(u64),
}

impl HeaderProblem {
    /// True when the header is intact but from a newer format (not damage).
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            HeaderProblem::UnsupportedVersion(_) | HeaderProblem::UnsupportedFlags(_)
        )
    }
}

impl fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderProblem::Short { len } => write!(
                f,
                "segment header cut short: file has {len} bytes, the header needs {SEGMENT_HEADER_LEN}"
            ),
            HeaderProblem::BadMagic => {
                f.write_str("bad magic in segment header: not a Riptide WAL segment")
            }
            HeaderProblem::BadChecksum => f.write_str("segment header checksum mismatch"),
            HeaderProblem::UnsupportedVersion(v) => write!(
                f,
                "segment format version {v} is not supported (this build reads version {FORMAT_VERSION})"
            ),
            HeaderProblem::UnsupportedFlags(v) => {
                write!(f, "segment header has unknown flags {v:#x}")
            }
            HeaderProblem::WrongNumber(n) => write!(
                f,
                "segment header says segment {n}: the file was renamed or misplaced"
            ),
        }
    }
}

/// Checks that `bytes` (the start of a file) is a valid header of segment `expected`.
pub fn check_segment_header(bytes: &[u8], expected: u64) -> Result<(), HeaderProblem> {
    let short = HeaderProblem::Short { len: bytes.len() };
    let mut d = Decoder::new(bytes);
    let magic = d
        .bytes(SEGMENT_MAGIC.len(), "magic")
        .map_err(|_| short.clone())?;
    if magic != SEGMENT_MAGIC {
        return Err(HeaderProblem::BadMagic);
    }
    let covered = bytes.get(..SEGMENT_HEADER_LEN - 8).ok_or(short.clone())?;
    let version = d.u32_le("version").map_err(|_| short.clone())?;
    let flags = d.u32_le("flags").map_err(|_| short.clone())?;
    let number = d.u64_le("segment number").map_err(|_| short.clone())?;
    let stored = d.u64_le("header checksum").map_err(|_| short)?;
    if stored != checksum(covered) {
        return Err(HeaderProblem::BadChecksum);
    }
    if version != FORMAT_VERSION {
        return Err(HeaderProblem::UnsupportedVersion(version));
    }
    if flags != 0 {
        return Err(HeaderProblem::UnsupportedFlags(flags));
    }
    if number != expected {
        return Err(HeaderProblem::WrongNumber(number));
    }
    Ok(())
}

/// The checksum stored in a record header: xxh3-64 over length, type and payload.
pub fn record_checksum(len: u32, kind: u8, payload: &[u8]) -> u64 {
    checksum_parts(&[&len.to_le_bytes(), &[kind], payload])
}

/// Frames `payload` as one full record: header and payload in one buffer, ready for a
/// single `write()`. The caller checks `payload.len() <= MAX_PAYLOAD_LEN`.
pub fn encode_record(payload: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(RECORD_HEADER_LEN + payload.len());
    encode_record_into(payload, &mut buf);
    buf
}

/// [`encode_record`], appending the record to `buf` (several records for one `write()`).
pub fn encode_record_into(payload: &[u8], buf: &mut Vec<u8>) {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    put_u64_le(buf, record_checksum(len, RECORD_TYPE_FULL, payload));
    put_u32_le(buf, len);
    buf.push(RECORD_TYPE_FULL);
    buf.extend_from_slice(payload);
}

/// A decoded record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// The stored checksum.
    pub checksum: u64,
    /// The payload length.
    pub len: u32,
    /// The record type.
    pub kind: u8,
}

impl RecordHeader {
    /// Decodes a record header from the first [`RECORD_HEADER_LEN`] bytes of `bytes`;
    /// `None` if there are fewer.
    pub fn decode(bytes: &[u8]) -> Option<RecordHeader> {
        let mut d = Decoder::new(bytes);
        Some(RecordHeader {
            checksum: d.u64_le("record checksum").ok()?,
            len: d.u32_le("record length").ok()?,
            kind: d.u8("record type").ok()?,
        })
    }

    /// True when `payload` matches the stored checksum.
    pub fn matches(&self, payload: &[u8]) -> bool {
        record_checksum(self.len, self.kind, payload) == self.checksum
    }
}

/// The outcome of [`find_intact_record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailScan {
    /// An intact record starts at this offset.
    Found(usize),
    /// No intact record starts anywhere in the range scanned.
    NotFound,
    /// The scan gave up after checksumming `budget` bytes (a large garbage tail).
    GaveUp,
}

/// Looks for the first intact full record that starts at or after `from` in `buf`,
/// checksumming at most `budget` payload bytes in total.
///
/// Used to tell a torn tail (nothing intact after the damage) from corruption in the middle
/// of a segment (intact records follow the damage). Only runs on the error path; the budget
/// bounds the quadratic worst case of a large tail of random bytes.
pub fn find_intact_record(buf: &[u8], from: usize, budget: usize) -> TailScan {
    let Some(last_start) = buf.len().checked_sub(RECORD_HEADER_LEN) else {
        return TailScan::NotFound;
    };
    let mut spent = 0usize;
    for off in from..=last_start {
        let Some(h) = buf.get(off..).and_then(RecordHeader::decode) else {
            continue;
        };
        if h.kind != RECORD_TYPE_FULL {
            continue;
        }
        let start = off + RECORD_HEADER_LEN;
        let Some(payload) = usize::try_from(h.len)
            .ok()
            .and_then(|len| start.checked_add(len))
            .and_then(|end| buf.get(start..end))
        else {
            continue;
        };
        spent = spent.saturating_add(payload.len());
        if spent > budget {
            return TailScan::GaveUp;
        }
        if h.matches(payload) {
            return TailScan::Found(off);
        }
    }
    TailScan::NotFound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip() {
        assert_eq!(segment_file_name(7), "000007.log");
        assert_eq!(segment_file_name(1234567), "1234567.log");
        assert_eq!(parse_segment_file_name("000007.log"), Some(7));
        assert_eq!(parse_segment_file_name("1234567.log"), Some(1234567));
        for bad in [
            "7.log",
            "0000007.log",
            "000007.log.discarded",
            "00000a.log",
            "000007.LOG",
            "+00007.log",
            "",
        ] {
            assert_eq!(parse_segment_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_round_trip_and_problems() {
        let h = encode_segment_header(42);
        assert_eq!(h.len(), SEGMENT_HEADER_LEN);
        assert_eq!(check_segment_header(&h, 42), Ok(()));
        assert_eq!(
            check_segment_header(&h, 43),
            Err(HeaderProblem::WrongNumber(42))
        );
        assert_eq!(
            check_segment_header(&h[..10], 42),
            Err(HeaderProblem::Short { len: 10 })
        );
        let mut bad = h.clone();
        bad[0] ^= 1;
        assert_eq!(check_segment_header(&bad, 42), Err(HeaderProblem::BadMagic));
        for i in 8..SEGMENT_HEADER_LEN {
            let mut bad = h.clone();
            bad[i] ^= 0x10;
            assert_eq!(
                check_segment_header(&bad, 42),
                Err(HeaderProblem::BadChecksum),
                "byte {i}"
            );
        }
    }

    #[test]
    fn record_framing() {
        let r = encode_record(b"hello");
        assert_eq!(r.len(), RECORD_HEADER_LEN + 5);
        let h = RecordHeader::decode(&r).unwrap();
        assert_eq!(h.len, 5);
        assert_eq!(h.kind, RECORD_TYPE_FULL);
        assert!(h.matches(&r[RECORD_HEADER_LEN..]));
        assert!(!h.matches(b"hellp"));
        let big = usize::MAX;
        assert_eq!(find_intact_record(&r, 0, big), TailScan::Found(0));
        assert_eq!(find_intact_record(&r, 1, big), TailScan::NotFound);
        let mut two = vec![0u8; 7];
        two.extend_from_slice(&r);
        assert_eq!(find_intact_record(&two, 0, big), TailScan::Found(7));
        assert_eq!(find_intact_record(&[0u8; 100], 0, big), TailScan::NotFound);
        assert_eq!(find_intact_record(&[], 0, big), TailScan::NotFound);
        let empty = encode_record(b"");
        assert_eq!(find_intact_record(&empty, 0, big), TailScan::Found(0));
        assert_eq!(find_intact_record(&two, 0, 4), TailScan::GaveUp);
    }
}
