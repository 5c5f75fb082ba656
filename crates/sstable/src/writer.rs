//! Writing a table.

use std::cmp::Ordering;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use riptide_common::checksum::checksum_parts;
use riptide_common::fs::{AppendWriter, CreateMode, FsRef};
use riptide_common::key::{
    MAX_SEQNO, compare_internal_keys, internal_key, parse_internal_key, user_key,
};
use riptide_common::range_del::{RangeTombstone, range_end_key};
use riptide_common::{Error, IoResultExt, Result, SeqNo, ValueKind};

use crate::block::{BlockBuilder, common_prefix_len};
use crate::compression::{BlockCompressor, TYPE_NONE};
use crate::filter::BloomFilterBuilder;
use crate::format::{
    ALIGNED_FORMAT_VERSION, BLOCK_TRAILER_LEN, BlockHandle, FOOTER_LEN, FORMAT_VERSION, Footer,
};
use crate::options::TableOptions;
use crate::properties::TableProperties;

/// Largest accepted internal key plus value, in bytes.
pub const MAX_ENTRY_SIZE: usize = 1 << 30;

/// Where blocks go: the file, its current length and the compressor.
struct BlockSink {
    file: BufWriter<AppendWriter>,
    offset: u64,
    compressor: BlockCompressor,
    scratch: Vec<u8>,
}

impl BlockSink {
    /// Writes `raw` (compressed if `compress` and worthwhile) plus its trailer.
    fn write_block(&mut self, raw: &[u8], compress: bool, path: &Path) -> Result<BlockHandle> {
        let kind = if compress {
            self.compressor.compress(raw, &mut self.scratch)
        } else {
            TYPE_NONE
        };
        let stored: &[u8] = if kind == TYPE_NONE {
            raw
        } else {
            &self.scratch
        };
        let sum = checksum_parts(&[stored, &[kind]]);
        let mut trailer = [0u8; BLOCK_TRAILER_LEN];
        let (t, s) = trailer.split_at_mut(1);
        t.copy_from_slice(&[kind]);
        s.copy_from_slice(&sum.to_le_bytes());
        self.file.write_all(stored).at("write table", path)?;
        self.file.write_all(&trailer).at("write table", path)?;
        let handle = BlockHandle {
            offset: self.offset,
            size: stored.len() as u64,
        };
        self.offset += (stored.len() + BLOCK_TRAILER_LEN) as u64;
        Ok(handle)
    }

    /// Writes zero bytes up to the next multiple of `align` (nothing if the offset is one);
    /// returns how many.
    fn pad_to(&mut self, align: u64, path: &Path) -> Result<u64> {
        const ZEROS: [u8; 4096] = [0; 4096];
        let mut pad = (align - self.offset % align) % align;
        let padded = pad;
        while pad > 0 {
            let n = pad.min(ZEROS.len() as u64) as usize;
            self.file
                .write_all(ZEROS.get(..n).unwrap_or_default())
                .at("write table", path)?;
            pad -= n as u64;
        }
        self.offset += padded;
        Ok(padded)
    }
}

/// Writes a new table file. Point entries must be added in strictly increasing
/// [`compare_internal_keys`] order; range tombstones
/// ([`add_range_tombstone`](Self::add_range_tombstone)) in any order, interleaved or not.
/// [`finish`](Self::finish) completes and syncs the file.
/// Dropping a writer without `finish` or [`abandon`](Self::abandon) leaves a partial file.
pub struct TableWriter {
    fs: FsRef,
    path: PathBuf,
    opts: TableOptions,
    sink: BlockSink,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter: BloomFilterBuilder,
    last_key: Vec<u8>,
    pending_index: Option<BlockHandle>,
    props: TableProperties,
    /// Range tombstones, in the order added (sorted at finish).
    tombstones: Vec<RangeTombstone>,
    failed: Option<Error>,
    /// Each data block starts at a multiple of this (`TableOptions::data_block_alignment`).
    align: Option<u64>,
}

impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("path", &self.path)
            .field("entries", &self.props.entries)
            .field("offset", &self.sink.offset)
            .finish()
    }
}

/// A separator `s` with `a <= s < b` (internal-key order), shorter than `a` when the user keys
/// allow it.
fn separator(a: &[u8], b: &[u8]) -> Vec<u8> {
    let (ua, ub) = (user_key(a), user_key(b));
    let n = common_prefix_len(ua, ub);
    if let (Some(&x), Some(&y)) = (ua.get(n), ub.get(n))
        && n + 1 < ua.len()
        && x < 0xff
        && x + 1 < y
        && let Some(prefix) = ua.get(..n)
    {
        let mut s = prefix.to_vec();
        s.push(x + 1);
        return internal_key(&s, MAX_SEQNO, ValueKind::Put);
    }
    a.to_vec()
}

impl TableWriter {
    /// Creates `path` (which must not exist) for a new table, on the real file system.
    pub fn create(path: &Path, opts: TableOptions) -> Result<Self> {
        Self::create_in(riptide_common::fs::real(), path, opts)
    }

    /// Creates `path` (which must not exist) for a new table on the file system `fs`
    /// (which also removes the file if the writer fails or is abandoned).
    pub fn create_in(fs: FsRef, path: &Path, opts: TableOptions) -> Result<Self> {
        opts.validate()?;
        let compressor = BlockCompressor::new(opts.compression)?;
        let align = opts.data_block_alignment();
        let file = fs.create(path, CreateMode::New).at("create table", path)?;
        Ok(TableWriter {
            fs,
            path: path.to_path_buf(),
            sink: BlockSink {
                file: BufWriter::with_capacity(
                    256 << 10,
                    AppendWriter::new(file, opts.bytes_per_sync),
                ),
                offset: 0,
                compressor,
                scratch: Vec::new(),
            },
            data_block: BlockBuilder::new(opts.restart_interval),
            index_block: BlockBuilder::new(1),
            filter: BloomFilterBuilder::new(opts.bloom_bits_per_key),
            last_key: Vec::new(),
            pending_index: None,
            props: TableProperties {
                compression: opts.compression,
                bloom_bits_per_key: opts.bloom_bits_per_key,
                block_size: opts.block_size as u64,
                restart_interval: opts.restart_interval as u64,
                block_align: align.unwrap_or(0),
                format_version: if align.is_some() {
                    ALIGNED_FORMAT_VERSION
                } else {
                    FORMAT_VERSION
                },
                ..TableProperties::default()
            },
            opts,
            tombstones: Vec::new(),
            failed: None,
            align,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a point entry. `InvalidArgument` if the key is not a valid internal key, is a
    /// range delete (those go through [`add_range_tombstone`](Self::add_range_tombstone)), is
    /// not greater than the previous one, or key plus value exceed [`MAX_ENTRY_SIZE`]. After
    /// an I/O error every further call fails with it.
    pub fn add(&mut self, internal_key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let parsed = parse_internal_key(internal_key).map_err(|e| {
            Error::invalid_argument(format!(
                "table {}: not an internal key: {}",
                self.path.display(),
                e.context()
            ))
        })?;
        if parsed.kind == ValueKind::RangeDelete {
            return Err(Error::invalid_argument(format!(
                "table {}: range deletes go in the range-deletion block \
                 (TableWriter::add_range_tombstone), not among the point entries",
                self.path.display()
            )));
        }
        if self.props.entries > 0
            && compare_internal_keys(internal_key, &self.last_key) != Ordering::Greater
        {
            return Err(Error::invalid_argument(format!(
                "table {}: keys must be added in strictly increasing order (entry {} is not \
                 after the previous key)",
                self.path.display(),
                self.props.entries
            )));
        }
        if internal_key.len().saturating_add(value.len()) > MAX_ENTRY_SIZE {
            return Err(Error::invalid_argument(format!(
                "table {}: entry of {} + {} bytes exceeds {MAX_ENTRY_SIZE}",
                self.path.display(),
                internal_key.len(),
                value.len()
            )));
        }
        // An aligned block must fit its page with its trailer.
        let trailer = if self.align.is_some() {
            BLOCK_TRAILER_LEN
        } else {
            0
        };
        if !self.data_block.is_empty()
            && self.data_block.estimated_size()
                + BlockBuilder::entry_size_bound(internal_key.len(), value.len())
                + trailer
                > self.opts.block_size
        {
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending_index.take() {
            let sep = separator(&self.last_key, internal_key);
            let mut enc = Vec::with_capacity(20);
            handle.encode_to(&mut enc);
            self.index_block.add(&sep, &enc);
        }
        let p = &mut self.props;
        if p.entries == 0 {
            p.smallest_key = internal_key.to_vec();
            p.min_seqno = parsed.seqno;
            p.max_seqno = parsed.seqno;
            self.filter.add_key(parsed.user_key);
        } else {
            if user_key(&self.last_key) != parsed.user_key {
                self.filter.add_key(parsed.user_key);
            }
            p.min_seqno = p.min_seqno.min(parsed.seqno);
            p.max_seqno = p.max_seqno.max(parsed.seqno);
        }
        p.entries += 1;
        if parsed.kind.is_tombstone() {
            p.tombstones += 1;
        }
        p.raw_key_bytes += internal_key.len() as u64;
        p.raw_value_bytes += value.len() as u64;
        self.data_block.add(internal_key, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(internal_key);
        Ok(())
    }

    /// Adds the range tombstone `[start, end)` at `seqno`, in any order relative to other
    /// tombstones and to point entries. `InvalidArgument` for an empty or inverted range, a
    /// seqno above `MAX_SEQNO - 1` (the largest seqno marks range ends, see
    /// [`range_end_key`]), or bounds over [`MAX_ENTRY_SIZE`]. Two tombstones with the same
    /// start and seqno are stored as one covering both.
    pub fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seqno: SeqNo) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let bad = |why: String| {
            Err(Error::invalid_argument(format!(
                "table {}: range tombstone {why}",
                self.path.display()
            )))
        };
        if start >= end {
            return bad(format!(
                "[{:?}, {:?}) is empty or inverted",
                String::from_utf8_lossy(start),
                String::from_utf8_lossy(end)
            ));
        }
        if seqno >= MAX_SEQNO {
            return bad(format!("seqno {seqno} is not below {MAX_SEQNO}"));
        }
        if start.len().saturating_add(end.len()) > MAX_ENTRY_SIZE {
            return bad(format!("bounds exceed {MAX_ENTRY_SIZE} bytes"));
        }
        self.tombstones.push(RangeTombstone::new(start, end, seqno));
        Ok(())
    }

    /// Range tombstones added so far.
    pub fn range_tombstones(&self) -> usize {
        self.tombstones.len()
    }

    fn record<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn flush_data_block(&mut self) -> Result<()> {
        let compress = true;
        if let Some(align) = self.align {
            let r = self.sink.pad_to(align, &self.path);
            self.props.data_size += self.record(r)?;
        }
        let r = self
            .sink
            .write_block(self.data_block.finish(), compress, &self.path);
        let handle = self.record(r)?;
        self.props.data_blocks += 1;
        self.props.data_size += handle.size + BLOCK_TRAILER_LEN as u64;
        self.data_block.reset();
        self.pending_index = Some(handle);
        Ok(())
    }

    /// Approximate size of the file if finished now.
    pub fn estimated_file_size(&self) -> u64 {
        let tombstones: usize = self
            .tombstones
            .iter()
            .map(|t| t.start.len() + t.end.len() + 16)
            .sum();
        self.sink.offset
            + tombstones as u64
            + self.data_block.estimated_size() as u64
            + self.index_block.estimated_size() as u64
            + (self.filter.len() as u64 * u64::from(self.opts.bloom_bits_per_key)) / 8
            + 512
            + FOOTER_LEN as u64
    }

    /// Point entries added so far.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Writes the last data block, the filter, index, range-deletion (if any tombstone was
    /// added) and properties blocks and the footer,
    /// then fsyncs the file (not its directory: the caller does that). On failure the file is
    /// removed. Returns the table's properties.
    pub fn finish(mut self) -> Result<TableProperties> {
        match self.finish_inner() {
            Ok(p) => Ok(p),
            Err(e) => {
                let (fs, path) = (self.fs.clone(), self.path.clone());
                drop(self);
                // Best effort: the error that matters is `e`; a leftover file is an orphan
                // that the next open deletes.
                let _ = fs.remove_file(&path);
                Err(e)
            }
        }
    }

    fn finish_inner(&mut self) -> Result<TableProperties> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if !self.data_block.is_empty() {
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending_index.take() {
            let mut enc = Vec::with_capacity(20);
            handle.encode_to(&mut enc);
            self.index_block.add(&self.last_key, &enc);
        }
        let path = self.path.clone();
        let filter = self.filter.finish();
        let filter_handle = self.sink.write_block(&filter, false, &path)?;
        let index_handle = self
            .sink
            .write_block(self.index_block.finish(), false, &path)?;
        let range_del_handle = if self.tombstones.is_empty() {
            None
        } else {
            let block = self.range_del_block();
            Some(self.sink.write_block(&block, false, &path)?)
        };
        let p = &mut self.props;
        p.largest_key = self.last_key.clone();
        for t in &self.tombstones {
            let start = t.start_key();
            let end = range_end_key(&t.end);
            if p.entries == 0 && p.range_deletes == 0 {
                p.smallest_key = start;
                p.largest_key = end;
                p.min_seqno = t.seqno;
                p.max_seqno = t.seqno;
            } else {
                if compare_internal_keys(&start, &p.smallest_key) == Ordering::Less {
                    p.smallest_key = start;
                }
                if compare_internal_keys(&end, &p.largest_key) == Ordering::Greater {
                    p.largest_key = end;
                }
                p.min_seqno = p.min_seqno.min(t.seqno);
                p.max_seqno = p.max_seqno.max(t.seqno);
            }
            p.range_deletes += 1;
        }
        p.filter_size = filter_handle.size + BLOCK_TRAILER_LEN as u64;
        p.index_size = index_handle.size + BLOCK_TRAILER_LEN as u64;
        p.creation_time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let props_block = p.encode();
        let props_handle = self.sink.write_block(&props_block, false, &path)?;
        let footer = Footer {
            index: index_handle,
            filter: filter_handle,
            properties: props_handle,
            range_del: range_del_handle,
            version: self.props.format_version,
        }
        .encode()?;
        self.sink.file.write_all(&footer).at("write table", &path)?;
        self.sink.offset += footer.len() as u64;
        self.sink.file.flush().at("write table", &path)?;
        self.sink
            .file
            .get_ref()
            .file()
            .sync_all()
            .at("fsync table", &path)?;
        self.props.file_size = self.sink.offset;
        Ok(self.props.clone())
    }

    /// Sorts the tombstones by internal key (start ascending, seqno descending), merges those
    /// sharing start and seqno, and encodes them as a block (restart interval 1): key =
    /// `(start, seqno, RangeDelete)`, value = end.
    fn range_del_block(&mut self) -> Vec<u8> {
        self.tombstones.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.seqno.cmp(&a.seqno))
                .then(b.end.cmp(&a.end))
        });
        self.tombstones
            .dedup_by(|later, kept| later.start == kept.start && later.seqno == kept.seqno);
        let mut block = BlockBuilder::new(1);
        for t in &self.tombstones {
            block.add(&t.start_key(), &t.end);
        }
        block.finish().to_vec()
    }

    /// Stops writing and removes the file.
    pub fn abandon(self) -> Result<()> {
        let (fs, path) = (self.fs.clone(), self.path.clone());
        let (file, _unwritten) = self.sink.file.into_parts();
        drop(file);
        fs.remove_file(&path).at("remove abandoned table", &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_sit_between() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"abcdef", b"abzz"),
            (b"abc", b"abd"),
            (b"a", b"b"),
            (b"abc\xff\xff", b"abd"),
            (b"helloworld", b"hellz"),
        ];
        for (a, b) in cases {
            let ka = internal_key(a, 5, ValueKind::Put);
            let kb = internal_key(b, 9, ValueKind::Put);
            let s = separator(&ka, &kb);
            assert_ne!(
                compare_internal_keys(&s, &ka),
                Ordering::Less,
                "{a:?} {b:?}"
            );
            assert_eq!(
                compare_internal_keys(&s, &kb),
                Ordering::Less,
                "{a:?} {b:?}"
            );
        }
        let s = separator(
            &internal_key(b"abcdef", 5, ValueKind::Put),
            &internal_key(b"abzz", 5, ValueKind::Put),
        );
        assert_eq!(user_key(&s), b"abd");
        let ka = internal_key(b"same", 9, ValueKind::Put);
        let kb = internal_key(b"same", 3, ValueKind::Put);
        assert_eq!(separator(&ka, &kb), ka);
    }
}
