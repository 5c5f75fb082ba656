//! Internal keys: a user key plus the sequence number and kind of one version of it.
//!
//! Encoding: `user_key ++ trailer`, where the trailer is 8 bytes, little-endian, of
//! `(seqno << 8) | kind`. Internal keys order by user key ascending (bytewise), then by trailer
//! descending, so the newest version of a key comes first. Plain bytewise comparison of encoded
//! internal keys is *not* this order: always use [`compare_internal_keys`].

use std::cmp::Ordering;

use crate::error::{Error, Result};

/// A sequence number. Every write gets the next one; a snapshot is the last one it can see.
pub type SeqNo = u64;

/// The largest sequence number that fits in a trailer (56 bits).
pub const MAX_SEQNO: SeqNo = (1 << 56) - 1;

/// Length in bytes of the trailer that follows the user key in an internal key.
pub const TRAILER_LEN: usize = 8;

/// Kind byte used only in seek targets: sorts before every real kind with the same seqno.
const SEEK_KIND: u8 = 0xFF;

/// What one version of a key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueKind {
    /// A tombstone: the key is deleted, hiding every older version.
    Delete = 0,
    /// A value.
    Put = 1,
    /// A tombstone whose writer promises the key was put exactly once since its previous
    /// single delete and never plainly deleted (RocksDB's contract); compaction drops it
    /// together with the put it meets.
    SingleDelete = 2,
    /// A range tombstone `[key, value)`; reserved for range deletes.
    RangeDelete = 3,
}

impl ValueKind {
    /// Decodes a kind byte; `None` for bytes that name no kind.
    pub fn from_u8(b: u8) -> Option<ValueKind> {
        match b {
            0 => Some(ValueKind::Delete),
            1 => Some(ValueKind::Put),
            2 => Some(ValueKind::SingleDelete),
            3 => Some(ValueKind::RangeDelete),
            _ => None,
        }
    }

    /// True for point tombstones (delete and single delete).
    pub fn is_tombstone(self) -> bool {
        matches!(self, ValueKind::Delete | ValueKind::SingleDelete)
    }
}

/// Packs a seqno and kind byte into a trailer value.
#[inline]
fn pack_trailer(seqno: SeqNo, kind: u8) -> u64 {
    ((seqno & MAX_SEQNO) << 8) | u64::from(kind)
}

/// Appends the internal key `(user_key, seqno, kind)` to `buf`.
#[inline]
pub fn encode_internal_key(buf: &mut Vec<u8>, user_key: &[u8], seqno: SeqNo, kind: ValueKind) {
    buf.reserve(user_key.len() + TRAILER_LEN);
    buf.extend_from_slice(user_key);
    buf.extend_from_slice(&pack_trailer(seqno, kind as u8).to_le_bytes());
}

/// The internal key `(user_key, seqno, kind)` as a new vector.
pub fn internal_key(user_key: &[u8], seqno: SeqNo, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    encode_internal_key(&mut v, user_key, seqno, kind);
    v
}

/// A seek target that sorts before every version of `user_key` with seqno <= `snapshot` and
/// after every version with a larger seqno. `seek(seek_key(k, s))` lands on the newest version
/// of `k` visible at `s` (or on a later key).
pub fn seek_key(user_key: &[u8], snapshot: SeqNo) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    v.extend_from_slice(user_key);
    v.extend_from_slice(&pack_trailer(snapshot, SEEK_KIND).to_le_bytes());
    v
}

/// The smallest user key above `user_key`: `user_key` followed by a zero byte. As an exclusive
/// end it still includes `user_key`; as an inclusive start it is the first key past it.
pub fn user_key_successor(user_key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + 1);
    v.extend_from_slice(user_key);
    v.push(0);
    v
}

/// A seek target that sorts after every version of `user_key`: `seek_for_prev` on it lands on
/// the oldest version of `user_key` (or on an earlier key).
pub fn seek_for_prev_key(user_key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    v.extend_from_slice(user_key);
    v.extend_from_slice(&0u64.to_le_bytes());
    v
}

/// An internal key split into its parts, borrowing the user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of this version.
    pub seqno: SeqNo,
    /// What this version is.
    pub kind: ValueKind,
}

/// Splits an encoded internal key. Fails with `Corruption` if it is shorter than a trailer or
/// its kind byte is unknown.
pub fn parse_internal_key(key: &[u8]) -> Result<ParsedInternalKey<'_>> {
    let Some(split) = key.len().checked_sub(TRAILER_LEN) else {
        return Err(Error::corruption(format!(
            "internal key of {} bytes is shorter than its {TRAILER_LEN}-byte trailer",
            key.len()
        )));
    };
    let (user_key, trailer) = key.split_at(split);
    let trailer = u64::from_le_bytes(
        trailer
            .try_into()
            .map_err(|_| Error::corruption("internal key trailer is not 8 bytes".to_string()))?,
    );
    let kind_byte = (trailer & 0xFF) as u8;
    let kind = ValueKind::from_u8(kind_byte).ok_or_else(|| {
        Error::corruption(format!(
            "internal key has unknown kind byte {kind_byte:#04x}"
        ))
    })?;
    Ok(ParsedInternalKey {
        user_key,
        seqno: trailer >> 8,
        kind,
    })
}

/// The user-key part of an internal key (the whole slice if it is too short to have a trailer).
#[inline]
pub fn user_key(key: &[u8]) -> &[u8] {
    key.get(..key.len().saturating_sub(TRAILER_LEN))
        .unwrap_or(key)
}

/// The trailer of an internal key as a number (0 if the key is too short).
#[inline]
fn trailer(key: &[u8]) -> u64 {
    match key
        .len()
        .checked_sub(TRAILER_LEN)
        .and_then(|s| key.get(s..))
        .and_then(|t| <[u8; 8]>::try_from(t).ok())
    {
        Some(t) => u64::from_le_bytes(t),
        None => 0,
    }
}

/// The seqno of an internal key (0 if the key is too short).
#[inline]
pub fn seqno_of(key: &[u8]) -> SeqNo {
    trailer(key) >> 8
}

/// Orders internal keys: user key ascending, then seqno and kind descending.
#[inline]
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    match user_key(a).cmp(user_key(b)) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successor_is_the_next_user_key() {
        let s = user_key_successor(b"ab");
        assert_eq!(s, b"ab\0");
        assert!(b"ab".as_slice() < s.as_slice());
        assert!(s.as_slice() < b"ab\x01".as_slice());
        assert!(s.as_slice() < b"abc".as_slice());
        assert_eq!(user_key_successor(b""), b"\0");
    }

    #[test]
    fn orders_by_user_key_then_newest_first() {
        let a1 = internal_key(b"a", 1, ValueKind::Put);
        let a5 = internal_key(b"a", 5, ValueKind::Delete);
        let ab = internal_key(b"ab", 9, ValueKind::Put);
        let b0 = internal_key(b"b", 0, ValueKind::Put);
        assert_eq!(compare_internal_keys(&a5, &a1), Ordering::Less);
        assert_eq!(compare_internal_keys(&a1, &ab), Ordering::Less);
        assert_eq!(compare_internal_keys(&ab, &b0), Ordering::Less);
        assert_eq!(compare_internal_keys(&a1, &a1), Ordering::Equal);
    }

    #[test]
    fn seek_key_sits_between_invisible_and_visible_versions() {
        let s = seek_key(b"k", 5);
        assert_eq!(
            compare_internal_keys(&internal_key(b"k", 6, ValueKind::Put), &s),
            Ordering::Less
        );
        assert_eq!(
            compare_internal_keys(&s, &internal_key(b"k", 5, ValueKind::RangeDelete)),
            Ordering::Less
        );
        let p = seek_for_prev_key(b"k");
        // The oldest possible version encodes exactly as the target: seek_for_prev (<=) finds it.
        assert_ne!(
            compare_internal_keys(&internal_key(b"k", 0, ValueKind::Delete), &p),
            Ordering::Greater
        );
        assert_eq!(
            compare_internal_keys(&internal_key(b"k", 1, ValueKind::Delete), &p),
            Ordering::Less
        );
        assert_eq!(
            compare_internal_keys(&p, &internal_key(b"k\0", MAX_SEQNO, ValueKind::Put)),
            Ordering::Less
        );
    }

    #[test]
    fn parse_round_trips_and_rejects_garbage() {
        let k = internal_key(b"hello", 42, ValueKind::SingleDelete);
        let p = parse_internal_key(&k).unwrap();
        assert_eq!(p.user_key, b"hello");
        assert_eq!(p.seqno, 42);
        assert_eq!(p.kind, ValueKind::SingleDelete);
        assert_eq!(seqno_of(&k), 42);
        assert!(parse_internal_key(b"short").is_err());
        assert!(parse_internal_key(&seek_key(b"x", 1)).is_err());
    }
}
