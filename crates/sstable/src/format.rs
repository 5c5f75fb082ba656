//! File-level layout: block handles, the block trailer and the footer.
//!
//! Every block on disk is followed by a 9-byte trailer: the compression type (`u8`) and the
//! xxh3-64 checksum (`u64` LE) of the stored block bytes followed by that type byte.
//!
//! The file ends with a fixed 68-byte footer:
//!
//! ```text
//! offset  size
//!  0      8   index block offset       u64 LE
//!  8      8   index block size         u64 LE
//! 16      8   filter block offset      u64 LE
//! 24      8   filter block size        u64 LE
//! 32      8   properties block offset  u64 LE
//! 40      8   properties block size    u64 LE
//! 48      8   checksum                 u64 LE: xxh3-64 of bytes 0..48 ++ bytes 56..68
//! 56      4   format version           u32 LE (1)
//! 60      8   magic                    u64 LE (the ASCII bytes "RIPTDSST")
//! ```

use riptide_common::checksum::checksum_parts;
use riptide_common::coding::{Decoder, put_u32_le, put_u64_le, put_varint64};
use riptide_common::{Error, Result};

/// Length of the trailer after every block: compression type + checksum.
pub const BLOCK_TRAILER_LEN: usize = 9;

/// Length of the footer.
pub const FOOTER_LEN: usize = 68;

/// The magic number at the end of every table: the bytes `RIPTDSST`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"RIPTDSST");

/// The format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

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
}

impl Footer {
    /// The footer's bytes (current format version).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FOOTER_LEN);
        for h in [self.index, self.filter, self.properties] {
            put_u64_le(&mut b, h.offset);
            put_u64_le(&mut b, h.size);
        }
        let mut tail = Vec::with_capacity(12);
        put_u32_le(&mut tail, FORMAT_VERSION);
        put_u64_le(&mut tail, MAGIC);
        let sum = checksum_parts(&[&b, &tail]);
        put_u64_le(&mut b, sum);
        b.extend_from_slice(&tail);
        b
    }

    /// Decodes and verifies a footer: magic first ("not a Riptide table"), then the version
    /// ("format version N not supported"), then the checksum.
    pub fn decode(bytes: &[u8]) -> Result<Footer> {
        if bytes.len() != FOOTER_LEN {
            return Err(Error::corruption(format!(
                "footer is {} bytes, expected {FOOTER_LEN}",
                bytes.len()
            )));
        }
        let (head, rest) = bytes
            .split_at_checked(48)
            .ok_or_else(|| Error::corruption("short footer".to_string()))?;
        let mut d = Decoder::new(rest);
        let stored_sum = d.u64_le("footer checksum")?;
        let tail = d.rest();
        let version = d.u32_le("format version")?;
        let magic = d.u64_le("magic")?;
        if magic != MAGIC {
            return Err(Error::corruption(format!(
                "not a Riptide table: magic number is {magic:#018x}, expected {MAGIC:#018x}"
            )));
        }
        if version != FORMAT_VERSION {
            return Err(Error::corruption(format!(
                "format version {version} not supported (this build reads version \
                 {FORMAT_VERSION})"
            )));
        }
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
        Ok(Footer {
            index: handle("index handle")?,
            filter: handle("filter handle")?,
            properties: handle("properties handle")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_refusals() {
        let f = Footer {
            index: BlockHandle { offset: 1, size: 2 },
            filter: BlockHandle { offset: 3, size: 4 },
            properties: BlockHandle { offset: 5, size: 6 },
        };
        let b = f.encode();
        assert_eq!(b.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&b).unwrap(), f);
        let mut bad = b.clone();
        bad[67] ^= 1;
        assert!(
            Footer::decode(&bad)
                .unwrap_err()
                .to_string()
                .contains("not a Riptide table")
        );
        let mut bad = b.clone();
        bad[56] = 2;
        assert!(
            Footer::decode(&bad)
                .unwrap_err()
                .to_string()
                .contains("format version 2 not supported")
        );
        for i in 0..56 {
            let mut bad = b.clone();
            bad[i] ^= 0x10;
            assert!(Footer::decode(&bad).is_err(), "byte {i}");
        }
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
