//! Two-phase-commit transaction ids, as the X/Open XA specification (and MariaDB's `XA`
//! statements) define them: a format id, a global transaction id and a branch qualifier.
//!
//! # Encoding
//!
//! [`Xid::encode`] writes, little-endian:
//!
//! | bytes          | field                                 |
//! |----------------|---------------------------------------|
//! | 4              | `format_id` (i32)                     |
//! | 1              | `gtrid_len` (u8, 1..=64)              |
//! | 1              | `bqual_len` (u8, 0..=64)              |
//! | `gtrid_len`    | gtrid                                 |
//! | `bqual_len`    | bqual                                 |
//!
//! and nothing after. [`Xid::decode`] accepts exactly that and reports anything else as
//! corruption.

use std::fmt;

use riptide_common::{Error, Result};

use crate::key_fmt::HexFmt;

/// The longest global transaction id, in bytes (XA `MAXGTRIDSIZE`).
pub const MAX_GTRID_LEN: usize = 64;
/// The longest branch qualifier, in bytes (XA `MAXBQUALSIZE`).
pub const MAX_BQUAL_LEN: usize = 64;
/// The format id XA reserves for "null XID"; not a valid id.
const NULL_FORMAT_ID: i32 = -1;
/// Format id, gtrid length and bqual length.
const HEADER_LEN: usize = 6;

/// A two-phase-commit transaction id. Displays as `format_id:hex(gtrid):hex(bqual)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Xid {
    format_id: i32,
    gtrid: Vec<u8>,
    bqual: Vec<u8>,
}

impl Xid {
    /// The id `(format_id, gtrid, bqual)`.
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::InvalidArgument`] if `gtrid` is empty or longer than
    /// [`MAX_GTRID_LEN`], `bqual` is longer than [`MAX_BQUAL_LEN`], or `format_id` is `-1`
    /// (which XA reserves for the null XID).
    pub fn new(format_id: i32, gtrid: &[u8], bqual: &[u8]) -> Result<Xid> {
        check(format_id, gtrid.len(), bqual.len()).map_err(Error::invalid_argument)?;
        Ok(Xid {
            format_id,
            gtrid: gtrid.to_vec(),
            bqual: bqual.to_vec(),
        })
    }

    /// The id with format 0, `name` as the global transaction id and an empty branch
    /// qualifier: a convenient name for Rust callers that are not an XA resource manager.
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::InvalidArgument`] if `name` is empty or longer than
    /// [`MAX_GTRID_LEN`] bytes.
    pub fn from_name(name: &str) -> Result<Xid> {
        Xid::new(0, name.as_bytes(), &[])
    }

    /// The format id (which naming scheme gtrid and bqual follow).
    pub fn format_id(&self) -> i32 {
        self.format_id
    }

    /// The global transaction id.
    pub fn gtrid(&self) -> &[u8] {
        &self.gtrid
    }

    /// The branch qualifier.
    pub fn bqual(&self) -> &[u8] {
        &self.bqual
    }

    /// The length of [`Xid::encode`]'s output.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.gtrid.len() + self.bqual.len()
    }

    /// The byte encoding described in the module documentation.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out);
        out
    }

    /// Appends the byte encoding to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.format_id.to_le_bytes());
        // Both lengths are at most 64, checked at construction.
        out.push(u8::try_from(self.gtrid.len()).unwrap_or(u8::MAX));
        out.push(u8::try_from(self.bqual.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(&self.gtrid);
        out.extend_from_slice(&self.bqual);
    }

    /// Parses exactly one encoded id.
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::Corruption`] naming the problem if `bytes` is too short,
    /// has trailing bytes or holds an id [`Xid::new`] would reject.
    pub fn decode(bytes: &[u8]) -> Result<Xid> {
        let corrupt =
            |what: String| Error::corruption(format!("xid of {} bytes: {what}", bytes.len()));
        let (header, body) = bytes
            .split_first_chunk::<HEADER_LEN>()
            .ok_or_else(|| corrupt(format!("shorter than the {HEADER_LEN}-byte header")))?;
        let [f0, f1, f2, f3, gtrid_len, bqual_len] = *header;
        let format_id = i32::from_le_bytes([f0, f1, f2, f3]);
        let (gtrid_len, bqual_len) = (usize::from(gtrid_len), usize::from(bqual_len));
        check(format_id, gtrid_len, bqual_len).map_err(corrupt)?;
        if body.len() != gtrid_len + bqual_len {
            return Err(corrupt(format!(
                "header announces {gtrid_len} gtrid and {bqual_len} bqual bytes, {} follow",
                body.len()
            )));
        }
        let (gtrid, bqual) = body.split_at_checked(gtrid_len).ok_or_else(|| {
            corrupt(format!(
                "gtrid length {gtrid_len} exceeds the {} bytes",
                body.len()
            ))
        })?;
        Ok(Xid {
            format_id,
            gtrid: gtrid.to_vec(),
            bqual: bqual.to_vec(),
        })
    }
}

/// Why `(format_id, gtrid_len, bqual_len)` is not a valid id, if it is not.
fn check(format_id: i32, gtrid_len: usize, bqual_len: usize) -> std::result::Result<(), String> {
    if format_id == NULL_FORMAT_ID {
        return Err("format id -1 is reserved for the null XID".to_string());
    }
    if gtrid_len == 0 || gtrid_len > MAX_GTRID_LEN {
        return Err(format!(
            "gtrid length {gtrid_len} is outside 1..={MAX_GTRID_LEN}"
        ));
    }
    if bqual_len > MAX_BQUAL_LEN {
        return Err(format!(
            "bqual length {bqual_len} is longer than {MAX_BQUAL_LEN}"
        ));
    }
    Ok(())
}

impl fmt::Display for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.format_id,
            HexFmt(&self.gtrid),
            HexFmt(&self.bqual)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::ErrorKind;

    #[test]
    fn encodes_displays_and_validates() {
        let x = Xid::new(1, b"gt", b"\x01").unwrap();
        assert_eq!(x.encode(), vec![1, 0, 0, 0, 2, 1, b'g', b't', 1]);
        assert_eq!(Xid::decode(&x.encode()).unwrap(), x);
        assert_eq!(x.to_string(), "1:6774:01");
        let n = Xid::from_name("tx").unwrap();
        assert_eq!(n.to_string(), "0:7478:");
        assert_eq!(
            (n.format_id(), n.gtrid(), n.bqual()),
            (0, &b"tx"[..], &b""[..])
        );

        let long = [0u8; 65];
        for bad in [
            Xid::new(0, &long, b""),
            Xid::new(0, b"g", &long),
            Xid::new(0, b"", b""),
            Xid::new(-1, b"g", b""),
            Xid::from_name(""),
        ] {
            assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidArgument);
        }
        assert!(Xid::new(i32::MIN, &long[..64], &long[..64]).is_ok());
    }

    #[test]
    fn rejects_malformed_bytes() {
        let good = Xid::new(7, b"abc", b"de").unwrap().encode();
        let mut trailing = good.clone();
        trailing.push(0);
        let mut short_body = good.clone();
        short_body.pop();
        let mut too_long = good.clone();
        if let Some(len) = too_long.get_mut(4) {
            *len = 65;
        }
        for bad in [&good[..3], &trailing[..], &short_body[..], &too_long[..]] {
            let err = Xid::decode(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
        }
        let err = Xid::decode(&trailing).unwrap_err();
        assert!(err.to_string().contains("3 gtrid and 2 bqual"), "{err}");
    }
}
