//! Short, printable renderings of keys and transaction-id lists for error messages.

use std::fmt;

use riptide_common::CfId;

/// Keys longer than this are cut in messages (the total length is still shown).
const MAX_SHOWN_KEY_BYTES: usize = 48;

/// Displays `cf 3 key "user\x00\x01"`: ASCII-escaped, cut after 48 bytes (the total length
/// is then shown). Every error message of the engine that names a key uses it.
pub struct KeyFmt<'a> {
    /// The column family id.
    pub cf: CfId,
    /// The key.
    pub key: &'a [u8],
}

impl fmt::Display for KeyFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.key.get(..MAX_SHOWN_KEY_BYTES).unwrap_or(self.key);
        write!(f, "cf {} key \"{}\"", self.cf, shown.escape_ascii())?;
        if shown.len() < self.key.len() {
            write!(f, "... ({} bytes)", self.key.len())?;
        }
        Ok(())
    }
}

/// Displays a list of transaction ids as `txn 7` or `txns 3, 4, 9`.
pub(crate) struct TxnsFmt<'a>(pub(crate) &'a [u64]);

impl fmt::Display for TxnsFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.len() == 1 { "txn " } else { "txns " })?;
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{id}")?;
        }
        Ok(())
    }
}

/// Lowercase hex of `bytes`, no separators.
pub(crate) struct HexFmt<'a>(pub(crate) &'a [u8]);

impl fmt::Display for HexFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_escaped_and_cut() {
        let k = KeyFmt {
            cf: 2,
            key: b"a\x00\"b",
        };
        assert_eq!(k.to_string(), "cf 2 key \"a\\x00\\\"b\"");
        let long = vec![b'x'; 100];
        let s = KeyFmt { cf: 0, key: &long }.to_string();
        assert!(s.ends_with("... (100 bytes)"), "{s}");
        assert_eq!(TxnsFmt(&[7]).to_string(), "txn 7");
        assert_eq!(TxnsFmt(&[3, 4]).to_string(), "txns 3, 4");
        assert_eq!(HexFmt(&[0x00, 0xab]).to_string(), "00ab");
    }
}
