//! Little-endian fixed-width and LEB128 varint encodings, and a bounds-checked [`Decoder`].
//!
//! Decoding never panics: every read past the end, or an over-long varint, is a
//! `Corruption` error that says what was being read and at which offset.

use crate::error::{Error, Result};

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn put_varint64(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends `v` as an unsigned LEB128 varint (1 to 5 bytes).
#[inline]
pub fn put_varint32(buf: &mut Vec<u8>, v: u32) {
    put_varint64(buf, u64::from(v));
}

/// Number of bytes [`put_varint64`] writes for `v`.
#[inline]
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Appends `bytes` preceded by its length as a varint.
#[inline]
pub fn put_length_prefixed(buf: &mut Vec<u8>, bytes: &[u8]) {
    put_varint64(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// Appends a little-endian u32.
#[inline]
pub fn put_u32_le(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends a little-endian u64.
#[inline]
pub fn put_u64_le(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// A cursor over a byte slice whose reads fail with `Corruption` instead of panicking.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder positioned at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Current offset from the start of the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    fn truncated(&self, what: &str, need: usize) -> Error {
        Error::corruption(format!(
            "truncated {what} at offset {}: need {need} bytes, {} left",
            self.pos,
            self.remaining()
        ))
    }

    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| self.truncated(what, n))?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.truncated(what, n))?;
        self.pos = end;
        Ok(s)
    }

    /// Reads one byte.
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        let b = self.bytes(1, what)?;
        Ok(b.first().copied().unwrap_or(0))
    }

    /// Reads a little-endian u32.
    pub fn u32_le(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        let a: [u8; 4] = b.try_into().map_err(|_| self.truncated(what, 4))?;
        Ok(u32::from_le_bytes(a))
    }

    /// Reads a little-endian u64.
    pub fn u64_le(&mut self, what: &str) -> Result<u64> {
        let b = self.bytes(8, what)?;
        let a: [u8; 8] = b.try_into().map_err(|_| self.truncated(what, 8))?;
        Ok(u64::from_le_bytes(a))
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    pub fn varint64(&mut self, what: &str) -> Result<u64> {
        let start = self.pos;
        let mut result: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                self.pos = start;
                return Err(self.truncated(what, 1));
            };
            self.pos += 1;
            result |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        self.pos = start;
        Err(Error::corruption(format!(
            "over-long varint for {what} at offset {start}"
        )))
    }

    /// Reads a varint that must fit in u32.
    pub fn varint32(&mut self, what: &str) -> Result<u32> {
        let start = self.pos;
        let v = self.varint64(what)?;
        u32::try_from(v).map_err(|_| {
            Error::corruption(format!(
                "varint {v} for {what} at offset {start} does not fit in 32 bits"
            ))
        })
    }

    /// Reads a varint used as a length or count, checked against the bytes left.
    pub fn varint_len(&mut self, what: &str) -> Result<usize> {
        let start = self.pos;
        let v = self.varint64(what)?;
        usize::try_from(v)
            .ok()
            .filter(|&n| n <= self.remaining())
            .ok_or_else(|| {
                Error::corruption(format!(
                    "length {v} for {what} at offset {start} exceeds the {} bytes left",
                    self.remaining()
                ))
            })
    }

    /// Reads a varint length followed by that many bytes.
    pub fn length_prefixed(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.varint_len(what)?;
        self.bytes(n, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varints_round_trip(v: u64) {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            prop_assert_eq!(b.len(), varint_len(v));
            let mut d = Decoder::new(&b);
            prop_assert_eq!(d.varint64("v").unwrap(), v);
            prop_assert!(d.is_empty());
        }

        #[test]
        fn decoding_garbage_never_panics(bytes: Vec<u8>) {
            let mut d = Decoder::new(&bytes);
            let _ = d.varint64("a");
            let _ = d.length_prefixed("b");
            let _ = d.u64_le("c");
            let _ = d.varint32("d");
        }
    }

    #[test]
    fn truncation_is_reported_with_offset() {
        let mut d = Decoder::new(&[0x80, 0x80]);
        let e = d.varint64("key length").unwrap_err();
        assert!(e.to_string().contains("key length at offset 0"), "{e}");
        let mut d = Decoder::new(&[5, 1, 2]);
        let e = d.length_prefixed("value").unwrap_err();
        assert!(e.to_string().contains("exceeds"), "{e}");
    }
}
