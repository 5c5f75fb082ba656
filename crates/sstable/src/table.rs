//! Reading a table: open, point lookups and block loading.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use riptide_common::checksum::checksum;
use riptide_common::key::{parse_internal_key, seek_key};
use riptide_common::{Error, IoResultExt, Result, SeqNo, ValueKind};

use crate::block::{Block, BlockIter};
use crate::cache::{BlockCache, next_table_id};
use crate::compression::{TYPE_NONE, TYPE_ZSTD, decompress_zstd};
use crate::filter::BloomFilter;
use crate::format::{BLOCK_TRAILER_LEN, BlockHandle, FOOTER_LEN, FORMAT_VERSION, Footer};
use crate::properties::TableProperties;
use crate::table_iter::TableIterator;

/// One version of a key found by [`Table::get`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableValue {
    /// Its sequence number.
    pub seqno: SeqNo,
    /// What it is (a put, a tombstone, or a range delete starting at this key).
    pub kind: ValueKind,
    /// Its value (empty for tombstones).
    pub value: Vec<u8>,
}

/// Read counters of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStats {
    /// Data blocks read from the file (cache misses or no cache).
    pub blocks_read: u64,
    /// Bytes of data blocks read from the file, trailers included.
    pub bytes_read: u64,
    /// Lookups answered "absent" by the bloom filter alone.
    pub filter_skips: u64,
}

/// An open, immutable table. Shared through `Arc`; every method takes `&self` and reads with
/// positional I/O, so any number of threads may use it at once.
pub struct Table {
    id: u64,
    path: PathBuf,
    file: File,
    file_size: u64,
    /// Blocks live in `[0, data_end)`; handles beyond it are corrupt.
    data_end: u64,
    /// Offset of the index block (for error messages).
    index_offset: u64,
    index: Arc<Block>,
    filter: BloomFilter,
    props: TableProperties,
    cache: Option<Arc<BlockCache>>,
    blocks_read: AtomicU64,
    bytes_read: AtomicU64,
    filter_skips: AtomicU64,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("file_size", &self.file_size)
            .finish()
    }
}

impl Table {
    /// Opens the table at `path`: reads and verifies the footer, the index, filter and
    /// properties blocks (kept in memory) and checks every index entry. Damage is reported as
    /// `Corruption` naming the file. Data blocks are read on demand, through `cache` if given.
    pub fn open(path: &Path, cache: Option<Arc<BlockCache>>) -> Result<Arc<Table>> {
        let file = File::open(path).at("open table", path)?;
        let file_size = file.metadata().at("stat table", path)?.len();
        let ctx = || format!("table {}", path.display());
        if file_size < FOOTER_LEN as u64 {
            return Err(Error::corruption(format!(
                "file of {file_size} bytes is too short to be a Riptide table"
            ))
            .with_context(ctx()));
        }
        let footer_offset = file_size - FOOTER_LEN as u64;
        let mut fbuf = [0u8; FOOTER_LEN];
        file.read_exact_at(&mut fbuf, footer_offset)
            .at("read table footer", path)?;
        let footer = Footer::decode(&fbuf)
            .map_err(|e| e.with_context(format!("footer at offset {footer_offset}")))
            .map_err(|e| e.with_context(ctx()))?;
        if footer.properties.end_with_trailer() != Some(footer_offset) {
            return Err(Error::corruption(format!(
                "properties block ({}+{}) does not end at the footer (offset {footer_offset})",
                footer.properties.offset, footer.properties.size
            ))
            .with_context(ctx()));
        }
        let mut table = Table {
            id: next_table_id(),
            path: path.to_path_buf(),
            file,
            file_size,
            data_end: footer_offset,
            index_offset: footer.index.offset,
            index: Arc::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0])?),
            filter: BloomFilter::disabled(),
            props: TableProperties::default(),
            cache,
            blocks_read: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            filter_skips: AtomicU64::new(0),
        };
        let props_block =
            Block::new(table.read_block_contents(footer.properties, "properties")?)
                .map_err(|e| table.block_error(e, "properties", footer.properties.offset))?;
        let mut props = TableProperties::decode(&props_block)
            .map_err(|e| table.block_error(e, "properties", footer.properties.offset))?;
        props.file_size = file_size;
        props.format_version = FORMAT_VERSION;
        let filter = BloomFilter::new(table.read_block_contents(footer.filter, "filter")?)
            .map_err(|e| table.block_error(e, "filter", footer.filter.offset))?;
        let index = Block::new(table.read_block_contents(footer.index, "index")?)
            .map_err(|e| table.block_error(e, "index", footer.index.offset))?;
        // Metablocks follow the data: data blocks must end before the filter block.
        table.data_end = footer.filter.offset;
        let blocks = table
            .check_index(&index)
            .map_err(|e| table.block_error(e, "index", footer.index.offset))?;
        if blocks != props.data_blocks {
            return Err(Error::corruption(format!(
                "index lists {blocks} data blocks, properties say {}",
                props.data_blocks
            ))
            .with_context(ctx()));
        }
        table.index = Arc::new(index);
        table.filter = filter;
        table.props = props;
        Ok(Arc::new(table))
    }

    /// Checks that index entries decode to contiguous, in-bounds handles; returns their count.
    fn check_index(&self, index: &Block) -> Result<u64> {
        let mut it = index.iter();
        it.seek_to_first()?;
        let mut expected_offset = 0u64;
        let mut n = 0u64;
        while it.valid() {
            parse_internal_key(it.key())?;
            let h = BlockHandle::decode(it.value())?;
            if h.offset != expected_offset {
                return Err(Error::corruption(format!(
                    "index entry {n} points at offset {}, expected {expected_offset}",
                    h.offset
                )));
            }
            expected_offset = h
                .end_with_trailer()
                .filter(|&e| e <= self.data_end)
                .ok_or_else(|| {
                    Error::corruption(format!(
                        "index entry {n}: block {}+{} runs past the data area ({} bytes)",
                        h.offset, h.size, self.data_end
                    ))
                })?;
            n += 1;
            it.next()?;
        }
        if expected_offset != self.data_end {
            return Err(Error::corruption(format!(
                "data blocks end at {expected_offset} but the filter block starts at {}",
                self.data_end
            )));
        }
        Ok(n)
    }

    pub(crate) fn block_error(&self, e: Error, what: &str, offset: u64) -> Error {
        e.with_context(format!(
            "table {}: {what} block at offset {offset}",
            self.path.display()
        ))
    }

    /// Reads, verifies and decompresses the block at `handle`.
    fn read_block_contents(&self, handle: BlockHandle, what: &str) -> Result<Vec<u8>> {
        let end = handle.end_with_trailer().filter(|&e| e <= self.data_end);
        let len = end.and_then(|_| usize::try_from(handle.size).ok());
        let Some(size) = len else {
            return Err(self.block_error(
                Error::corruption(format!(
                    "block of {} bytes runs past offset {}",
                    handle.size, self.data_end
                )),
                what,
                handle.offset,
            ));
        };
        let mut buf = vec![0u8; size + BLOCK_TRAILER_LEN];
        self.file.read_exact_at(&mut buf, handle.offset).at(
            &format!("read {what} block at offset {} of", handle.offset),
            &self.path,
        )?;
        let corrupt = |msg: String| self.block_error(Error::corruption(msg), what, handle.offset);
        let (covered, stored_sum) = buf
            .split_at_checked(size + 1)
            .ok_or_else(|| corrupt("short block buffer".to_string()))?;
        let stored_sum = u64::from_le_bytes(
            stored_sum
                .try_into()
                .map_err(|_| corrupt("short block trailer".to_string()))?,
        );
        let actual = checksum(covered);
        if actual != stored_sum {
            return Err(corrupt(format!(
                "checksum mismatch: stored {stored_sum:#018x}, computed {actual:#018x}"
            )));
        }
        let kind = covered.last().copied().unwrap_or(u8::MAX);
        match kind {
            TYPE_NONE => {
                buf.truncate(size);
                Ok(buf)
            }
            TYPE_ZSTD => decompress_zstd(covered.get(..size).unwrap_or_default())
                .map_err(|e| self.block_error(e, what, handle.offset)),
            other => Err(corrupt(format!("unknown compression type {other}"))),
        }
    }

    /// The data block at `handle`, from the cache or the file.
    pub(crate) fn data_block(&self, handle: BlockHandle) -> Result<Arc<Block>> {
        if let Some(cache) = &self.cache
            && let Some(b) = cache.get(self.id, handle.offset)
        {
            return Ok(b);
        }
        let data = self.read_block_contents(handle, "data")?;
        self.blocks_read.fetch_add(1, Ordering::Relaxed);
        self.bytes_read
            .fetch_add(handle.size + BLOCK_TRAILER_LEN as u64, Ordering::Relaxed);
        let block =
            Arc::new(Block::new(data).map_err(|e| self.block_error(e, "data", handle.offset))?);
        if let Some(cache) = &self.cache {
            cache.insert(self.id, handle.offset, Arc::clone(&block));
        }
        Ok(block)
    }

    /// Decodes an index entry's value into a handle, with file context on failure.
    pub(crate) fn decode_handle(&self, value: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode(value).map_err(|e| self.block_error(e, "index", self.index_offset()))
    }

    pub(crate) fn index_offset(&self) -> u64 {
        self.index_offset
    }

    /// The newest version of `user_key` with seqno <= `snapshot` in this table (possibly a
    /// tombstone), or `None`. Consults the bloom filter first.
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Result<Option<TableValue>> {
        if !self.filter.may_contain(user_key) {
            self.filter_skips.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let target = seek_key(user_key, snapshot);
        let mut index = BlockIter::new(&*self.index);
        index
            .seek(&target)
            .map_err(|e| self.block_error(e, "index", self.index_offset()))?;
        // The first block whose separator is >= target may hold only smaller keys when the
        // separator was shortened; then the answer starts the next block.
        while index.valid() {
            let handle = self.decode_handle(index.value())?;
            let block = self.data_block(handle)?;
            let mut it = BlockIter::new(&*block);
            it.seek(&target)
                .map_err(|e| self.block_error(e, "data", handle.offset))?;
            if it.valid() {
                let parsed = parse_internal_key(it.key())
                    .map_err(|e| self.block_error(e, "data", handle.offset))?;
                if parsed.user_key != user_key {
                    return Ok(None);
                }
                return Ok(Some(TableValue {
                    seqno: parsed.seqno,
                    kind: parsed.kind,
                    value: it.value().to_vec(),
                }));
            }
            index
                .next()
                .map_err(|e| self.block_error(e, "index", self.index_offset()))?;
        }
        Ok(None)
    }

    /// False only if the bloom filter proves `user_key` absent from this table.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.filter.may_contain(user_key)
    }

    /// A bidirectional iterator over every entry; it keeps this table alive.
    pub fn iter(self: &Arc<Self>) -> TableIterator {
        TableIterator::new(Arc::clone(self))
    }

    /// The table's properties.
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The file this table was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// This table's process-unique id (its block cache key prefix).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The in-memory index block.
    pub(crate) fn index_block(&self) -> &Arc<Block> {
        &self.index
    }

    /// Bytes of memory pinned by this table (index and filter).
    pub fn memory_usage(&self) -> usize {
        self.index.size() + self.filter.size()
    }

    /// Read counters.
    pub fn stats(&self) -> TableStats {
        TableStats {
            blocks_read: self.blocks_read.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            filter_skips: self.filter_skips.load(Ordering::Relaxed),
        }
    }
}
