//! Per-block compression.
//!
//! A block's stored bytes depend on its compression type byte (kept in the block trailer):
//!
//! * `0` (none): the block bytes as they are.
//! * `1` (zstd): `uncompressed_len: varint` followed by one zstd frame that decompresses to
//!   exactly `uncompressed_len` bytes (at most [`MAX_COMPRESSED_BLOCK_RAW`]).
//!
//! The writer stores a block uncompressed when compression does not save at least 1/8 of it.

use std::cell::RefCell;

use riptide_common::coding::{Decoder, put_varint64};
use riptide_common::{Error, Result};

use crate::options::Compression;

/// Type byte of an uncompressed block.
pub const TYPE_NONE: u8 = 0;
/// Type byte of a zstd-compressed block.
pub const TYPE_ZSTD: u8 = 1;

/// Blocks larger than this are never compressed, and a compressed block claiming a larger
/// decompressed size is corrupt.
pub const MAX_COMPRESSED_BLOCK_RAW: usize = 256 << 20;

/// Compresses blocks for a writer, reusing one zstd context.
pub struct BlockCompressor {
    zstd: Option<zstd::bulk::Compressor<'static>>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for BlockCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCompressor")
            .field("zstd", &self.zstd.is_some())
            .finish()
    }
}

impl BlockCompressor {
    /// A compressor for `compression`.
    pub fn new(compression: Compression) -> Result<Self> {
        let zstd = match compression {
            Compression::None => None,
            Compression::Zstd { level } => Some(
                zstd::bulk::Compressor::new(level)
                    .map_err(|e| Error::io("create zstd compressor", e))?,
            ),
        };
        Ok(BlockCompressor {
            zstd,
            scratch: Vec::new(),
        })
    }

    /// Compresses `raw` into `out` (cleared first) and returns the type byte; returns
    /// [`TYPE_NONE`] (leaving `out` empty) when the block is to be stored as it is.
    pub fn compress(&mut self, raw: &[u8], out: &mut Vec<u8>) -> u8 {
        out.clear();
        let Some(z) = self.zstd.as_mut() else {
            return TYPE_NONE;
        };
        if raw.len() > MAX_COMPRESSED_BLOCK_RAW || raw.len() < 64 {
            return TYPE_NONE;
        }
        self.scratch.clear();
        self.scratch
            .reserve(zstd::zstd_safe::compress_bound(raw.len()));
        if z.compress_to_buffer(raw, &mut self.scratch).is_err() {
            return TYPE_NONE;
        }
        put_varint64(out, raw.len() as u64);
        out.extend_from_slice(&self.scratch);
        if out.len() > raw.len() - raw.len() / 8 {
            out.clear();
            return TYPE_NONE;
        }
        TYPE_ZSTD
    }
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses the stored bytes of a zstd block (type [`TYPE_ZSTD`]).
pub fn decompress_zstd(stored: &[u8]) -> Result<Vec<u8>> {
    let mut d = Decoder::new(stored);
    let len = d.varint64("uncompressed block length")?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_COMPRESSED_BLOCK_RAW)
        .ok_or_else(|| {
            Error::corruption(format!(
                "compressed block claims {len} uncompressed bytes (at most \
                 {MAX_COMPRESSED_BLOCK_RAW})"
            ))
        })?;
    let frame = d.rest();
    let mut out = Vec::with_capacity(len);
    let n = DECOMPRESSOR.with(|cell| -> Result<usize> {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| Error::io("create zstd decompressor", e))?,
            );
        }
        match slot.as_mut() {
            Some(z) => z
                .decompress_to_buffer(frame, &mut out)
                .map_err(|e| Error::corruption(format!("zstd block does not decompress: {e}"))),
            None => Err(Error::io(
                "create zstd decompressor",
                std::io::Error::other("no decompressor"),
            )),
        }
    })?;
    if n != len || out.len() != len {
        return Err(Error::corruption(format!(
            "zstd block decompressed to {n} bytes, expected {len}"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_fallback() {
        let mut c = BlockCompressor::new(Compression::Zstd { level: 1 }).unwrap();
        let raw: Vec<u8> = (0..4096u32).map(|i| (i % 7) as u8).collect();
        let mut out = Vec::new();
        assert_eq!(c.compress(&raw, &mut out), TYPE_ZSTD);
        assert!(out.len() < raw.len());
        assert_eq!(decompress_zstd(&out).unwrap(), raw);
        // Incompressible data is stored as is.
        let noise: Vec<u8> = (0..4096u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        let mut out2 = Vec::new();
        let t = c.compress(&noise, &mut out2);
        if t == TYPE_NONE {
            assert!(out2.is_empty());
        }
        let mut bad = out.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        let _ = decompress_zstd(&bad);
        assert!(decompress_zstd(&[0x80]).is_err());
        assert!(decompress_zstd(&[0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    }
}
