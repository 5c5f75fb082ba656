//! File-level layout: block handles, the block trailer and the footer.
//!
//! Every block on disk is followed by a 9-byte trailer: the compression type (`u8`) and the
//! xxh3-64 checksum (`u64` LE) of the stored block bytes followed by that type byte.
//!
//! The file ends with a footer whose last 12 bytes (format version, magic) sit at the same
//! place in every version. Version 2 (written by this crate) is 84 bytes:
//!
//! ```text
//! offset  size
//!  0      8   index block offset       u64 LE
//!  8      8   index block size         u64 LE
//! 16      8   filter block offset      u64 LE
//! 24      8   filter block size        u64 LE
//! 32      8   properties block offset  u64 LE
//! 40      8   properties block size    u64 LE
//! 48      8   range-del block offset   u64 LE (0 when there is no such block)
//! 56      8   range-del block size     u64 LE (0 when there is no such block)
//! 64      8   checksum                 u64 LE: xxh3-64 of bytes 0..64 ++ bytes 72..84
//! 72      4   format version           u32 LE (2)
//! 76      8   magic                    u64 LE (the ASCII bytes "RIPTDSST")
//! ```
//!
//! Version 1 (still read) is 68 bytes: the same without the range-del handle (checksum at
//! 48 over bytes `0..48 ++ 56..68`, version at 56, magic at 60).

use riptide_common::checksum::checksum_parts;
use riptide_common::coding::{Decoder, put_u32_le, put_u64_le, put_varint64};
use riptide_common::{Error, Result};

/// Length of the trailer after every block: compression type + checksum.
pub const BLOCK_TRAILER_LEN: usize = 9;

/// Length of the footer of the current format version ([`FORMAT_VERSION`]).
pub const FOOTER_LEN: usize = 84;

/// Length of a version-1 footer, the shortest of any version: a file shorter than this is
/// not a table.
pub const MIN_FOOTER_LEN: usize = 68;

/// Length of the footer's tail (format version + magic), at the end of the file in every
/// version.
pub const FOOTER_TAIL_LEN: usize = 12;

/// The magic number at the end of every table: the bytes `RIPTDSST`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"RIPTDSST");

/// The format version this crate writes tables in, unless their data blocks are aligned
/// ([`ALIGNED_FORMAT_VERSION`]).
pub const FORMAT_VERSION: u32 = 2;

/// The format version of a table whose data blocks start at multiples of its block size,
/// zero bytes padding the gap after each one (`TableOptions::block_align`); otherwise as
/// version 2. Older builds refuse these tables rather than misread their padding.
pub const ALIGNED_FORMAT_VERSION: u32 = 3;

/// The newest format version this crate reads: it reads every version from
/// [`OLDEST_FORMAT_VERSION`] to this one.
pub const NEWEST_FORMAT_VERSION: u32 = ALIGNED_FORMAT_VERSION;

/// The oldest format version this crate reads.
pub const OLDEST_FORMAT_VERSION: u32 = 1;

/// Length of the footer of format `version`, `None` for versions this crate does not know.
pub fn footer_len(version: u32) -> Option<usize> {
    match version {
        1 => Some(MIN_FOOTER_LEN),
        2 | ALIGNED_FORMAT_VERSION => Some(FOOTER_LEN),
        _ => None,
    }
}

/// Where a block lives in the file: its offset and its stored size (trailer excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Stored (possibly compressed) size of the block, without its trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the handle as two varints (as in index block values).
    pub fn encode_to(&self, buf: &mut Vec<u8>) {
        put_varint64(buf, self.offset);
        put_varint64(buf, self.size);
    }

    /// Decodes a handle written by [`encode_to`](Self::encode_to); the bytes must hold exactly
    /// the two varints.
    pub fn decode(bytes: &[u8]) -> Result<BlockHandle> {
        let mut d = Decoder::new(bytes);
        let offset = d.varint64("block handle offset")?;
        let size = d.varint64("block handle size")?;
        if !d.is_empty() {
            return Err(Error::corruption(format!(
                "block handle has {} trailing bytes",
                d.remaining()
            )));
        }
        Ok(BlockHandle { offset, size })
    }

    /// Offset just past the block's trailer, or `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The index block.
    pub index: BlockHandle,
    /// The filter block.
    pub filter: BlockHandle,
    /// The properties block.
    pub properties: BlockHandle,
    /// The range-deletion block; `None` when the table has no range tombstone (stored as the
    /// handle `(0, 0)`) and in version-1 tables, which cannot have one.
    pub range_del: Option<BlockHandle>,
    /// The format version the footer was read in (or is to be written in).
    pub version: u32,
}

impl Footer {
    /// The footer's bytes in format [`Footer::version`] (1 or 2). A version-1 footer has no
    /// room for [`Footer::range_del`], which must then be `None`; an unknown version or a
    /// version-1 footer with a range-del handle is `InvalidArgument`.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let len = footer_len(self.version).ok_or_else(|| {
            Error::invalid_argument(format!("cannot write format version {}", self.version))
        })?;
        let mut b = Vec::with_capacity(len);
        for h in [self.index, self.filter, self.properties] {
            put_u64_le(&mut b, h.offset);
            put_u64_le(&mut b, h.size);
        }
        match (self.version, self.range_del) {
            (1, None) => {}
            (1, Some(_)) => {
                return Err(Error::invalid_argument(
                    "a version-1 footer cannot name a range-del block".to_string(),
                ));
            }
            (_, h) => {
                let h = h.unwrap_or_default();
                put_u64_le(&mut b, h.offset);
                put_u64_le(&mut b, h.size);
            }
        }
        let mut tail = Vec::with_capacity(FOOTER_TAIL_LEN);
        put_u32_le(&mut tail, self.version);
        put_u64_le(&mut tail, MAGIC);
        let sum = checksum_parts(&[&b, &tail]);
        put_u64_le(&mut b, sum);
        b.extend_from_slice(&tail);
        Ok(b)
    }

    /// Decodes and verifies the footer at the end of `bytes` (the last bytes of the file: at
    /// least the footer, possibly more before it). Checks the magic first ("not a Riptide
    /// table"), then the version ("format version N not supported"), then the checksum.
    pub fn decode(bytes: &[u8]) -> Result<Footer> {
        let tail_start = bytes.len().checked_sub(FOOTER_TAIL_LEN).ok_or_else(|| {
            Error::corruption(format!(
                "footer is {} bytes, expected at least {MIN_FOOTER_LEN}",
                bytes.len()
            ))
        })?;
        let tail = bytes.get(tail_start..).unwrap_or_default();
        let mut d = Decoder::new(tail);
        let version = d.u32_le("format version")?;
        let magic = d.u64_le("magic")?;
        if magic != MAGIC {
            return Err(Error::corruption(format!(
                "not a Riptide table: magic number is {magic:#018x}, expected {MAGIC:#018x}"
            )));
        }
        let len = footer_len(version).ok_or_else(|| {
            Error::corruption(format!(
                "format version {version} not supported (this build reads versions \
                 {OLDEST_FORMAT_VERSION} to {NEWEST_FORMAT_VERSION})"
            ))
        })?;
        let footer = bytes
            .len()
            .checked_sub(len)
            .and_then(|start| bytes.get(start..))
            .ok_or_else(|| {
                Error::corruption(format!(
                    "footer of format version {version} is {len} bytes, only {} available",
                    bytes.len()
                ))
            })?;
        let sum_at = len - 8 - FOOTER_TAIL_LEN;
        let (head, rest) = footer
            .split_at_checked(sum_at)
            .ok_or_else(|| Error::corruption("short footer".to_string()))?;
        let mut d = Decoder::new(rest);
        let stored_sum = d.u64_le("footer checksum")?;
        let actual = checksum_parts(&[head, tail]);
        if actual != stored_sum {
            return Err(Error::corruption(format!(
                "footer checksum mismatch: stored {stored_sum:#018x}, computed {actual:#018x}"
            )));
        }
        let mut d = Decoder::new(head);
        let mut handle = |what: &str| -> Result<BlockHandle> {
            Ok(BlockHandle {
                offset: d.u64_le(what)?,
                size: d.u64_le(what)?,
            })
        };
        let index = handle("index handle")?;
        let filter = handle("filter handle")?;
        let properties = handle("properties handle")?;
        let range_del = if version >= 2 {
            let h = handle("range-del handle")?;
            match (h.offset, h.size) {
                (0, 0) => None,
                (_, 0) => {
                    return Err(Error::corruption(format!(
                        "range-del handle has size 0 but offset {}",
                        h.offset
                    )));
                }
                _ => Some(h),
            }
        } else {
            None
        };
        Ok(Footer {
            index,
            filter,
            properties,
            range_del,
            version,
        })
    }

    /// The length of this footer on disk.
    pub fn encoded_len(&self) -> usize {
        footer_len(self.version).unwrap_or(FOOTER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_refusals() {
        for (version, range_del) in [
            (2, Some(BlockHandle { offset: 7, size: 8 })),
            (2, None),
            (1, None),
        ] {
            let f = Footer {
                index: BlockHandle { offset: 1, size: 2 },
                filter: BlockHandle { offset: 3, size: 4 },
                properties: BlockHandle { offset: 5, size: 6 },
                range_del,
                version,
            };
            let b = f.encode().unwrap();
            let len = footer_len(version).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(f.encoded_len(), len);
            assert_eq!(Footer::decode(&b).unwrap(), f);
            // Bytes before the footer are ignored.
            let mut longer = vec![0xAB; 100];
            longer.extend_from_slice(&b);
            assert_eq!(Footer::decode(&longer).unwrap(), f);
            let mut bad = b.clone();
            bad[len - 1] ^= 1;
            assert!(
                Footer::decode(&bad)
                    .unwrap_err()
                    .to_string()
                    .contains("not a Riptide table")
            );
            let mut bad = b.clone();
            bad[len - 12] = 4;
            assert!(
                Footer::decode(&bad)
                    .unwrap_err()
                    .to_string()
                    .contains("format version 4 not supported (this build reads versions 1 to 3)")
            );
            for i in 0..len - 8 {
                let mut bad = b.clone();
                bad[i] ^= 0x10;
                assert!(Footer::decode(&bad).is_err(), "version {version} byte {i}");
            }
        }
        let v1 = Footer {
            index: BlockHandle::default(),
            filter: BlockHandle::default(),
            properties: BlockHandle::default(),
            range_del: Some(BlockHandle { offset: 1, size: 1 }),
            version: 1,
        };
        assert!(v1.encode().is_err());
        assert!(Footer { version: 9, ..v1 }.encode().is_err());
        // A v2 footer too short for its version.
        let f = Footer {
            range_del: None,
            version: 2,
            ..v1
        };
        let b = f.encode().unwrap();
        assert!(Footer::decode(&b[20..]).is_err());
        assert!(Footer::decode(&b[80..]).is_err());
    }

    #[test]
    fn handle_round_trip() {
        let h = BlockHandle {
            offset: 123_456_789,
            size: 4096,
        };
        let mut b = Vec::new();
        h.encode_to(&mut b);
        assert_eq!(BlockHandle::decode(&b).unwrap(), h);
        b.push(0);
        assert!(BlockHandle::decode(&b).is_err());
        assert!(BlockHandle::decode(&[0x80]).is_err());
    }
}
