//! Blocks: the unit of storage, caching and search inside a table.
//!
//! A block is a run of entries with key prefix compression, followed by the restart array:
//!
//! ```text
//! entry*  restart_offset: u32 LE * num_restarts  num_restarts: u32 LE
//! entry = shared: varint  non_shared: varint  value_len: varint  key_delta[non_shared]  value[value_len]
//! ```
//!
//! An entry's key is the first `shared` bytes of the previous entry's key followed by
//! `key_delta`. Every `restart_interval`-th entry is a *restart point*: it stores its key in full
//! (`shared == 0`) and its offset is listed in the restart array, so a seek can binary-search the
//! restart points and then scan at most one interval. The first entry is always a restart point
//! (`restart_offset[0] == 0`); an empty block is just `0u32 1u32`.
//!
//! [`BlockBuilder`] writes a block, [`Block`] validates one read back, [`BlockIter`] walks it in
//! both directions. Keys are compared with
//! [`compare_internal_keys`].

use std::cmp::Ordering;
use std::ops::Deref;

use riptide_common::coding::{put_u32_le, put_varint32};
use riptide_common::key::compare_internal_keys;
use riptide_common::{Error, Result};

/// Builds one block in memory.
#[derive(Debug, Clone)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    entries: usize,
    last_key: Vec<u8>,
    finished: bool,
}

/// Length of the common prefix of `a` and `b`.
#[inline]
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl BlockBuilder {
    /// An empty builder with a restart point every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            entries: 0,
            last_key: Vec::new(),
            finished: false,
        }
    }

    /// Appends an entry. Keys must be added in increasing order for searches to work; the
    /// builder itself does not check. The block must stay below 4 GiB.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished, "add after finish without reset");
        let shared = if self.counter < self.restart_interval {
            common_prefix_len(&self.last_key, key)
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        let delta = key.get(shared..).unwrap_or_default();
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, delta.len() as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(delta);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(delta);
        self.counter += 1;
        self.entries += 1;
    }

    /// Size in bytes the block would have if finished now.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Upper bound of the bytes [`add`](Self::add) of this key and value would add.
    pub fn entry_size_bound(key_len: usize, value_len: usize) -> usize {
        15 + 4 + key_len + value_len
    }

    /// Number of entries added since the last reset.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// True when no entry was added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The key of the last entry added (empty if none).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array and returns the finished block bytes. Call
    /// [`reset`](Self::reset) before adding again.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_u32_le(&mut self.buf, r);
            }
            put_u32_le(&mut self.buf, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buf
    }

    /// Empties the builder, keeping its allocations.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.entries = 0;
        self.last_key.clear();
        self.finished = false;
    }
}

/// A validated, immutable block (its bytes after decompression).
#[derive(Debug)]
pub struct Block {
    data: Vec<u8>,
    /// Offset of the restart array: entries live in `data[..restarts_offset]`.
    restarts_offset: usize,
    num_restarts: usize,
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

impl Block {
    /// Wraps block bytes, checking the restart array: present, starting at 0, strictly
    /// increasing and pointing inside the entry area. Entries themselves are checked as they
    /// are decoded. Fails with `Corruption`.
    pub fn new(data: Vec<u8>) -> Result<Block> {
        let len = data.len();
        let num_restarts = len
            .checked_sub(4)
            .and_then(|at| u32_at(&data, at))
            .ok_or_else(|| {
                Error::corruption(format!("block of {len} bytes has no restart count"))
            })? as usize;
        let restarts_offset = num_restarts
            .checked_mul(4)
            .and_then(|n| len.checked_sub(n + 4))
            .ok_or_else(|| {
                Error::corruption(format!(
                    "block of {len} bytes cannot hold its {num_restarts} restart points"
                ))
            })?;
        if num_restarts == 0 {
            return Err(Error::corruption("block has no restart points".to_string()));
        }
        let mut prev: Option<usize> = None;
        for i in 0..num_restarts {
            let at = restarts_offset + 4 * i;
            let r = u32_at(&data, at).unwrap_or(u32::MAX) as usize;
            let ok = match prev {
                None => r == 0,
                Some(p) => r > p && r < restarts_offset,
            };
            if !ok {
                return Err(Error::corruption(format!(
                    "block restart point {i} (at block offset {at}) is {r}: not increasing \
                     inside the {restarts_offset}-byte entry area"
                )));
            }
            prev = Some(r);
        }
        Ok(Block {
            data,
            restarts_offset,
            num_restarts,
        })
    }

    /// The block's bytes, restart array included.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Size of the block's bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// Bytes of memory this block occupies: its buffer's capacity and the `Block` itself.
    pub fn memory_size(&self) -> usize {
        self.data.capacity() + std::mem::size_of::<Block>()
    }

    /// True if the block holds no entry.
    pub fn is_empty(&self) -> bool {
        self.restarts_offset == 0
    }

    /// Number of restart points.
    pub fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// An iterator borrowing this block.
    pub fn iter(&self) -> BlockIter<&Block> {
        BlockIter::new(self)
    }

    #[inline]
    fn restart_point(&self, i: usize) -> usize {
        // Validated in `new`: every index < num_restarts is readable.
        u32_at(&self.data, self.restarts_offset + 4 * i)
            .map_or(self.restarts_offset, |r| r as usize)
    }
}

/// Reads a varint of at most 5 bytes (a u32) at `*pos`, not reading at or past `limit`.
#[inline]
fn read_varint32(data: &[u8], pos: &mut usize, limit: usize) -> Option<u32> {
    let mut result: u32 = 0;
    for shift in (0..35).step_by(7) {
        if *pos >= limit {
            return None;
        }
        let b = *data.get(*pos)?;
        *pos += 1;
        result |= u32::from(b & 0x7F).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(result);
        }
    }
    None
}

/// The decoded header of one entry.
#[derive(Debug, Clone, Copy)]
struct EntryHeader {
    shared: usize,
    key_start: usize,
    key_end: usize,
    value_end: usize,
}

/// Decodes the header of the entry at `offset`, checking that it fits before `limit`.
#[inline]
fn decode_entry(data: &[u8], offset: usize, limit: usize) -> Result<EntryHeader> {
    // Fast path: the three lengths are one-byte varints (short keys and values).
    if let Some(key_start) = offset.checked_add(3).filter(|&e| e <= limit)
        && let Some(&[shared, non_shared, value_len]) = data.get(offset..key_start)
        && (shared | non_shared | value_len) < 0x80
    {
        let key_end = key_start.saturating_add(usize::from(non_shared));
        let value_end = key_end.saturating_add(usize::from(value_len));
        if value_end <= limit {
            return Ok(EntryHeader {
                shared: usize::from(shared),
                key_start,
                key_end,
                value_end,
            });
        }
    }
    decode_entry_slow(data, offset, limit)
}

/// [`decode_entry`] for any varint lengths, and the errors.
#[inline(never)]
fn decode_entry_slow(data: &[u8], offset: usize, limit: usize) -> Result<EntryHeader> {
    let mut pos = offset;
    let fail = |what: &str| {
        Error::corruption(format!(
            "bad block entry at block offset {offset}: {what} (entry area is {limit} bytes)"
        ))
    };
    let shared = read_varint32(data, &mut pos, limit).ok_or_else(|| fail("shared length"))?;
    let non_shared =
        read_varint32(data, &mut pos, limit).ok_or_else(|| fail("non-shared length"))?;
    let value_len = read_varint32(data, &mut pos, limit).ok_or_else(|| fail("value length"))?;
    let key_end = pos
        .checked_add(non_shared as usize)
        .filter(|&e| e <= limit)
        .ok_or_else(|| fail("key runs past the entry area"))?;
    let value_end = key_end
        .checked_add(value_len as usize)
        .filter(|&e| e <= limit)
        .ok_or_else(|| fail("value runs past the entry area"))?;
    Ok(EntryHeader {
        shared: shared as usize,
        key_start: pos,
        key_end,
        value_end,
    })
}

/// A bidirectional cursor over one block's entries. `B` is how the block is held: `&Block`
/// for a short-lived search or `Arc<Block>` for an iterator that outlives the borrow.
///
/// Positioning calls return `Corruption` for damaged entries, after which the iterator is
/// invalid.
#[derive(Debug)]
pub struct BlockIter<B: Deref<Target = Block>> {
    block: B,
    /// Offset of the current entry; `restarts_offset` when invalid.
    current: usize,
    /// Offset just past the current entry.
    next: usize,
    /// Index of the restart interval holding the current entry.
    restart_index: usize,
    key: Vec<u8>,
    value_start: usize,
    value_end: usize,
}

impl<B: Deref<Target = Block>> BlockIter<B> {
    /// An unpositioned (invalid) iterator over `block`.
    pub fn new(block: B) -> Self {
        Self::with_key_buffer(block, Vec::new())
    }

    /// Like [`new`](Self::new), but reuses `buf` (cleared) to hold the current key, so a
    /// short-lived search allocates nothing once the buffer has grown. Get the buffer back
    /// with [`into_key_buffer`](Self::into_key_buffer).
    pub fn with_key_buffer(block: B, mut buf: Vec<u8>) -> Self {
        buf.clear();
        let end = block.restarts_offset;
        BlockIter {
            block,
            current: end,
            next: end,
            restart_index: 0,
            key: buf,
            value_start: 0,
            value_end: 0,
        }
    }

    /// Gives back the key buffer (for [`with_key_buffer`](Self::with_key_buffer)).
    pub fn into_key_buffer(self) -> Vec<u8> {
        self.key
    }

    /// The block being iterated.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// True when positioned on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.current < self.block.restarts_offset
    }

    /// The current entry's key (empty when invalid).
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's value (empty when invalid).
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value_start..self.value_end)
            .unwrap_or_default()
    }

    /// Makes the iterator invalid.
    pub fn invalidate(&mut self) {
        self.current = self.block.restarts_offset;
        self.next = self.current;
        self.key.clear();
        self.value_start = 0;
        self.value_end = 0;
    }

    fn fail(&mut self, e: Error) -> Error {
        self.invalidate();
        e
    }

    /// Decodes the entry at `self.next`. Returns false (and becomes invalid) at the end.
    #[inline]
    fn parse_next(&mut self) -> Result<bool> {
        let limit = self.block.restarts_offset;
        let offset = self.next;
        if offset >= limit {
            self.invalidate();
            return Ok(false);
        }
        let h = match decode_entry(&self.block.data, offset, limit) {
            Ok(h) => h,
            Err(e) => return Err(self.fail(e)),
        };
        if h.shared > self.key.len() {
            let e = Error::corruption(format!(
                "bad block entry at block offset {offset}: shares {} bytes with a {}-byte \
                 previous key",
                h.shared,
                self.key.len()
            ));
            return Err(self.fail(e));
        }
        let delta = self
            .block
            .data
            .get(h.key_start..h.key_end)
            .unwrap_or_default();
        self.key.truncate(h.shared);
        self.key.extend_from_slice(delta);
        self.current = offset;
        self.next = h.value_end;
        self.value_start = h.key_end;
        self.value_end = h.value_end;
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1) <= offset
        {
            self.restart_index += 1;
        }
        Ok(true)
    }

    fn seek_to_restart(&mut self, index: usize) {
        self.key.clear();
        self.restart_index = index;
        self.next = self.block.restart_point(index);
    }

    /// The full key stored at restart point `index`.
    fn restart_key(&self, index: usize) -> Result<&[u8]> {
        let offset = self.block.restart_point(index);
        let h = decode_entry(&self.block.data, offset, self.block.restarts_offset)?;
        if h.shared != 0 {
            return Err(Error::corruption(format!(
                "bad block entry at block offset {offset}: restart point shares {} key bytes",
                h.shared
            )));
        }
        Ok(self
            .block
            .data
            .get(h.key_start..h.key_end)
            .unwrap_or_default())
    }

    /// Positions on the first entry.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.seek_to_restart(0);
        self.parse_next()?;
        Ok(())
    }

    /// Positions on the last entry.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.seek_to_restart(self.block.num_restarts.saturating_sub(1));
        while self.parse_next()? && self.next < self.block.restarts_offset {}
        Ok(())
    }

    /// Positions on the first entry whose key is >= `target`.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        // Find the last restart point whose key is < target.
        let mut left = 0usize;
        let mut right = self.block.num_restarts.saturating_sub(1);
        if self.block.is_empty() {
            self.invalidate();
            return Ok(());
        }
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let ord = match self.restart_key(mid) {
                Ok(k) => compare_internal_keys(k, target),
                Err(e) => return Err(self.fail(e)),
            };
            match ord {
                Ordering::Less => left = mid,
                Ordering::Equal => {
                    left = mid;
                    right = mid;
                }
                Ordering::Greater => right = mid - 1,
            }
        }
        self.seek_to_restart(left);
        while self.parse_next()? {
            if compare_internal_keys(&self.key, target) != Ordering::Less {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Positions on the last entry whose key is <= `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.seek(target)?;
        if !self.valid() {
            self.seek_to_last()
        } else if compare_internal_keys(&self.key, target) == Ordering::Greater {
            self.prev()
        } else {
            Ok(())
        }
    }

    /// Moves to the next entry (invalid after the last). Only call while valid.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        self.parse_next()?;
        Ok(())
    }

    /// Moves to the previous entry (invalid before the first). Only call while valid.
    pub fn prev(&mut self) -> Result<()> {
        let original = self.current;
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return Ok(());
            }
            self.restart_index -= 1;
        }
        self.seek_to_restart(self.restart_index);
        loop {
            if !self.parse_next()? {
                // Cannot happen in a valid block: `original` is an entry boundary.
                let e = Error::corruption(format!(
                    "block entry at block offset {original} is not reachable from its restart \
                     point"
                ));
                return Err(self.fail(e));
            }
            if self.next >= original {
                if self.next != original {
                    let e = Error::corruption(format!(
                        "block entries overlap before block offset {original}"
                    ));
                    return Err(self.fail(e));
                }
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::ValueKind;
    use riptide_common::key::internal_key;

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    fn build(n: usize, interval: usize) -> (Block, Entries) {
        let mut b = BlockBuilder::new(interval);
        let mut entries = Vec::new();
        for i in 0..n {
            let k = internal_key(format!("key{i:05}").as_bytes(), 7, ValueKind::Put);
            let v = format!("value{i}").into_bytes();
            b.add(&k, &v);
            entries.push((k, v));
        }
        (Block::new(b.finish().to_vec()).unwrap(), entries)
    }

    #[test]
    fn forward_backward_and_seek() {
        for interval in [1, 2, 3, 16] {
            for n in [0, 1, 2, 15, 16, 17, 100] {
                let (block, entries) = build(n, interval);
                let mut it = block.iter();
                it.seek_to_first().unwrap();
                for (k, v) in &entries {
                    assert!(it.valid());
                    assert_eq!(it.key(), k.as_slice());
                    assert_eq!(it.value(), v.as_slice());
                    it.next().unwrap();
                }
                assert!(!it.valid());
                it.seek_to_last().unwrap();
                for (k, _) in entries.iter().rev() {
                    assert_eq!(it.key(), k.as_slice());
                    it.prev().unwrap();
                }
                assert!(!it.valid());
                for (i, (k, _)) in entries.iter().enumerate() {
                    it.seek(k).unwrap();
                    assert_eq!(it.key(), k.as_slice());
                    it.seek_for_prev(k).unwrap();
                    assert_eq!(it.key(), k.as_slice());
                    let between = internal_key(format!("key{i:05}a").as_bytes(), 7, ValueKind::Put);
                    it.seek(&between).unwrap();
                    assert_eq!(it.valid(), i + 1 < n);
                    it.seek_for_prev(&between).unwrap();
                    assert_eq!(it.key(), k.as_slice());
                }
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let (block, _) = build(40, 4);
        let good = block.data().to_vec();
        for i in 0..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= bit;
                if let Ok(b) = Block::new(bad) {
                    let mut it = b.iter();
                    if it.seek_to_first().is_ok() {
                        while it.valid() && it.next().is_ok() {}
                    }
                    if it.seek_to_last().is_ok() {
                        while it.valid() && it.prev().is_ok() {}
                    }
                    let _ = it.seek(b"key00020\0\0\0\0\0\0\0\0");
                }
            }
        }
        assert!(Block::new(vec![1, 2]).is_err());
        assert!(Block::new(vec![0, 0, 0, 0]).is_err());
        assert!(Block::new(vec![0xff, 0, 0, 0, 5, 0, 0, 0]).is_err());
    }
}
