//! [`WriteBatch`]: an ordered list of writes applied atomically, and its byte format.
//!
//! The encoded batch is exactly the payload of one WAL record, so a batch is durable and
//! atomic as one unit. Format (all integers little-endian, varints LEB128):
//!
//! ```text
//! batch   := seqno:u64  count:u32  [marker]  entry*(count & 0x7fff_ffff)
//! marker  := marker_kind:u8  xid:bytes                 present when bit 31 of count is set
//! entry   := kind:u8  cf_id:varint32  key:bytes  [value:bytes]   value only for Put, RangeDelete
//! bytes   := len:varint64  byte*len
//! ```
//!
//! `seqno` is the sequence number of the first entry; entry `i` gets `seqno + i`. It is zero
//! until the write path assigns it at commit.
//!
//! A *marker* ties a batch to a two-phase-commit transaction named by an encoded xid (see
//! [`BatchMarker`]): `1` prepare (the entries are logged but not applied), `2` commit (the
//! entries are applied and the prepared transaction is finished), `3` rollback (no entries;
//! the prepared transaction is forgotten). Batches without a marker are unchanged from the
//! first format, so old WAL records stay readable.

use crate::coding::{Decoder, put_length_prefixed, put_varint32};
use crate::error::{Error, Result};
use crate::key::{SeqNo, ValueKind};

/// Size of the batch header (seqno + count).
pub const BATCH_HEADER_LEN: usize = 12;

/// Identifier of a column family. The default column family is 0.
pub type CfId = u32;

/// The id of the default column family.
pub const DEFAULT_CF_ID: CfId = 0;

/// Bit 31 of the header's count: a marker follows the header.
const MARKER_FLAG: u32 = 0x8000_0000;

/// What a batch's marker says about the two-phase-commit transaction it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchMarker {
    /// The batch's entries are the prepared writes of the transaction: logged durably, not
    /// applied (they get no sequence numbers) until a commit marker for the same xid.
    Prepare = 1,
    /// The batch's entries are the transaction's writes, applied now; the prepared
    /// transaction is finished.
    Commit = 2,
    /// The prepared transaction is rolled back; the batch has no entries.
    Rollback = 3,
}

impl BatchMarker {
    fn from_u8(b: u8) -> Option<BatchMarker> {
        match b {
            1 => Some(BatchMarker::Prepare),
            2 => Some(BatchMarker::Commit),
            3 => Some(BatchMarker::Rollback),
            _ => None,
        }
    }
}

/// One decoded entry of a batch, borrowing from the batch's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// What the entry does.
    pub kind: ValueKind,
    /// The column family it applies to.
    pub cf: CfId,
    /// The user key (for a range delete, the inclusive start).
    pub key: &'a [u8],
    /// The value for a put, the exclusive end key for a range delete, empty otherwise.
    pub value: &'a [u8],
}

/// An atomic group of writes, possibly across column families.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    /// Number of entries (without the marker flag).
    count: u32,
    /// Bytes of the marker after the header; 0 when there is none.
    marker_len: usize,
}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        let mut rep = Vec::with_capacity(64);
        rep.extend_from_slice(&[0u8; BATCH_HEADER_LEN]);
        WriteBatch {
            rep,
            count: 0,
            marker_len: 0,
        }
    }

    fn push(&mut self, kind: ValueKind, cf: CfId, key: &[u8], value: Option<&[u8]>) {
        self.rep.push(kind as u8);
        put_varint32(&mut self.rep, cf);
        put_length_prefixed(&mut self.rep, key);
        if let Some(v) = value {
            put_length_prefixed(&mut self.rep, v);
        }
        self.count = self.count.saturating_add(1).min(!MARKER_FLAG);
        self.write_count_field();
    }

    fn write_count_field(&mut self) {
        let field = self.count | if self.marker_len > 0 { MARKER_FLAG } else { 0 };
        if let Some(c) = self.rep.get_mut(8..12) {
            c.copy_from_slice(&field.to_le_bytes());
        }
    }

    /// Tags this batch with a two-phase-commit marker for the transaction named by `xid`
    /// (replacing any marker it had). Batches with a marker are logged as WAL records of
    /// their own, never merged with other batches.
    pub fn set_marker(&mut self, marker: BatchMarker, xid: &[u8]) {
        let mut encoded = vec![marker as u8];
        put_length_prefixed(&mut encoded, xid);
        let old = BATCH_HEADER_LEN..BATCH_HEADER_LEN + self.marker_len;
        self.rep.splice(old, encoded.iter().copied());
        self.marker_len = encoded.len();
        self.write_count_field();
    }

    /// The batch's marker and the xid it names, if it has one.
    pub fn marker(&self) -> Option<(BatchMarker, &[u8])> {
        if self.marker_len == 0 {
            return None;
        }
        let mut d = Decoder::new(self.rep.get(BATCH_HEADER_LEN..)?);
        let kind = BatchMarker::from_u8(d.u8("marker").ok()?)?;
        let xid = d.length_prefixed("xid").ok()?;
        Some((kind, xid))
    }

    /// Adds a put of `key` -> `value` in column family `cf`.
    pub fn put_cf(&mut self, cf: CfId, key: &[u8], value: &[u8]) {
        self.push(ValueKind::Put, cf, key, Some(value));
    }

    /// Adds a delete of `key` in column family `cf`.
    pub fn delete_cf(&mut self, cf: CfId, key: &[u8]) {
        self.push(ValueKind::Delete, cf, key, None);
    }

    /// Adds a single delete of `key` in column family `cf` (see [`ValueKind::SingleDelete`]).
    pub fn single_delete_cf(&mut self, cf: CfId, key: &[u8]) {
        self.push(ValueKind::SingleDelete, cf, key, None);
    }

    /// Adds a range delete of `[start, end)` in column family `cf`: a range tombstone hiding
    /// every older version of every key `k` with `start <= k < end` (see
    /// [`crate::range_del`]). Encoded as an entry of kind [`ValueKind::RangeDelete`] whose key
    /// is `start` and whose value is `end`. The batch records the range as given; the write
    /// path refuses inverted ranges (see [`crate::range_del::check_range`]) and readers ignore
    /// empty ones.
    pub fn delete_range_cf(&mut self, cf: CfId, start: &[u8], end: &[u8]) {
        self.push(ValueKind::RangeDelete, cf, start, Some(end));
    }

    /// Adds a put in the default column family.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.put_cf(DEFAULT_CF_ID, key, value);
    }

    /// Adds a delete in the default column family.
    pub fn delete(&mut self, key: &[u8]) {
        self.delete_cf(DEFAULT_CF_ID, key);
    }

    /// Adds a single delete in the default column family.
    pub fn single_delete(&mut self, key: &[u8]) {
        self.single_delete_cf(DEFAULT_CF_ID, key);
    }

    /// Adds a range delete of `[start, end)` in the default column family (see
    /// [`WriteBatch::delete_range_cf`]).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        self.delete_range_cf(DEFAULT_CF_ID, start, end);
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the batch holds no entry.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every entry and the marker.
    pub fn clear(&mut self) {
        self.rep.truncate(BATCH_HEADER_LEN);
        self.rep.fill(0);
        self.count = 0;
        self.marker_len = 0;
    }

    /// Size of the encoded batch in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len()
    }

    /// The encoded batch (the WAL record payload).
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    /// Sequence number of the first entry (0 until assigned).
    pub fn seqno(&self) -> SeqNo {
        self.rep
            .get(..8)
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0)
    }

    /// Sets the sequence number of the first entry.
    pub fn set_seqno(&mut self, seqno: SeqNo) {
        if let Some(s) = self.rep.get_mut(..8) {
            s.copy_from_slice(&seqno.to_le_bytes());
        }
    }

    /// Parses and fully validates an encoded batch (for example a WAL record).
    pub fn from_data(data: Vec<u8>) -> Result<WriteBatch> {
        let mut d = Decoder::new(&data);
        d.u64_le("write batch seqno")?;
        let field = d.u32_le("write batch count")?;
        let count = field & !MARKER_FLAG;
        let mut marker_len = 0;
        if field & MARKER_FLAG != 0 {
            let kind = d.u8("write batch marker")?;
            if BatchMarker::from_u8(kind).is_none() {
                return Err(Error::corruption(format!(
                    "write batch has unknown marker kind {kind:#04x}"
                )));
            }
            d.length_prefixed("write batch marker xid")?;
            marker_len = d.position() - BATCH_HEADER_LEN;
        }
        let batch = WriteBatch {
            rep: data,
            count,
            marker_len,
        };
        let mut seen = 0u32;
        for e in batch.iter() {
            e?;
            seen = seen.saturating_add(1);
        }
        if seen != count {
            return Err(Error::corruption(format!(
                "write batch header says {count} entries but holds {seen}"
            )));
        }
        Ok(batch)
    }

    /// Iterates the entries in order. Each item is an error if the bytes are malformed.
    pub fn iter(&self) -> WriteBatchIter<'_> {
        let mut d = Decoder::new(&self.rep);
        let ok = d
            .bytes(BATCH_HEADER_LEN + self.marker_len, "write batch header")
            .is_ok();
        WriteBatchIter {
            d,
            failed: !ok,
            left: self.count,
        }
    }

    /// Appends every entry of `other` to this batch (not its marker).
    pub fn append(&mut self, other: &WriteBatch) {
        if let Some(body) = other.rep.get(BATCH_HEADER_LEN + other.marker_len..) {
            self.rep.extend_from_slice(body);
            self.count = self.count.saturating_add(other.count).min(!MARKER_FLAG);
            self.write_count_field();
        }
    }
}

/// Iterator over the entries of a [`WriteBatch`].
#[derive(Debug)]
pub struct WriteBatchIter<'a> {
    d: Decoder<'a>,
    failed: bool,
    left: u32,
}

impl<'a> WriteBatchIter<'a> {
    fn decode_one(&mut self) -> Result<BatchEntry<'a>> {
        let at = self.d.position();
        let kind_byte = self.d.u8("write batch entry kind")?;
        let kind = ValueKind::from_u8(kind_byte).ok_or_else(|| {
            Error::corruption(format!(
                "write batch entry at offset {at} has unknown kind {kind_byte:#04x}"
            ))
        })?;
        let cf = self.d.varint32("write batch column family")?;
        let key = self.d.length_prefixed("write batch key")?;
        let value = match kind {
            ValueKind::Put | ValueKind::RangeDelete => {
                self.d.length_prefixed("write batch value")?
            }
            ValueKind::Delete | ValueKind::SingleDelete => &[],
        };
        Ok(BatchEntry {
            kind,
            cf,
            key,
            value,
        })
    }
}

impl<'a> Iterator for WriteBatchIter<'a> {
    type Item = Result<BatchEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.d.is_empty() {
            if self.left != 0 {
                self.failed = true;
                return Some(Err(Error::corruption(format!(
                    "write batch ends with {} of its entries missing",
                    self.left
                ))));
            }
            return None;
        }
        if self.left == 0 {
            self.failed = true;
            return Some(Err(Error::corruption(format!(
                "write batch has {} trailing bytes after its last entry",
                self.d.remaining()
            ))));
        }
        self.left -= 1;
        let r = self.decode_one();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips_entries_and_seqno() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete_cf(3, b"b");
        b.single_delete(b"c");
        b.delete_range_cf(5, b"d", b"f");
        b.delete_range(b"x", b"y");
        b.set_seqno(77);
        let b2 = WriteBatch::from_data(b.data().to_vec()).unwrap();
        assert_eq!(b2.seqno(), 77);
        let e: Vec<_> = b2.iter().map(|e| e.unwrap()).collect();
        assert_eq!(e.len(), 5);
        assert_eq!(
            e[3],
            BatchEntry {
                kind: ValueKind::RangeDelete,
                cf: 5,
                key: b"d",
                value: b"f"
            }
        );
        assert_eq!((e[4].cf, e[4].key, e[4].value), (0, &b"x"[..], &b"y"[..]));
        assert_eq!(
            e[0],
            BatchEntry {
                kind: ValueKind::Put,
                cf: 0,
                key: b"a",
                value: b"1"
            }
        );
        assert_eq!(e[1].cf, 3);
        assert_eq!(e[2].kind, ValueKind::SingleDelete);
    }

    #[test]
    fn truncated_batch_is_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value");
        let mut d = b.data().to_vec();
        d.pop();
        assert!(WriteBatch::from_data(d).is_err());
        assert!(WriteBatch::from_data(vec![1, 2, 3]).is_err());
    }

    #[test]
    fn marker_round_trips_and_leaves_entries_alone() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.set_marker(BatchMarker::Prepare, b"xid-1");
        b.delete(b"b");
        b.set_marker(BatchMarker::Commit, b"xid-22");
        b.set_seqno(9);
        let b2 = WriteBatch::from_data(b.data().to_vec()).unwrap();
        assert_eq!(b2.marker(), Some((BatchMarker::Commit, &b"xid-22"[..])));
        assert_eq!(b2.len(), 2);
        let keys: Vec<_> = b2.iter().map(|e| e.unwrap().key.to_vec()).collect();
        assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec()]);
        let mut plain = WriteBatch::new();
        plain.append(&b2);
        assert_eq!(plain.marker(), None);
        assert_eq!(plain.len(), 2);
        let mut bad = b2.data().to_vec();
        bad[BATCH_HEADER_LEN] = 9;
        assert!(WriteBatch::from_data(bad).is_err());
        let mut rb = WriteBatch::new();
        rb.set_marker(BatchMarker::Rollback, b"x");
        let rb2 = WriteBatch::from_data(rb.data().to_vec()).unwrap();
        assert!(rb2.is_empty());
        assert_eq!(rb2.marker(), Some((BatchMarker::Rollback, &b"x"[..])));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_without_panic(bytes: Vec<u8>) {
            let _ = WriteBatch::from_data(bytes);
        }
    }
}
