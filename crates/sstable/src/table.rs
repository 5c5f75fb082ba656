//! Reading a table: open, point lookups and block loading.
//!
//! The index block and the bloom filter are either pinned in the [`Table`] for its lifetime or,
//! with [`TableReadOptions::cache_index_and_filter`] and a block cache, fetched through the
//! [`BlockCache`] on demand (charged to it and evicted like data blocks).
//!
//! Range tombstones (the range-deletion block, format version 2) are few: they are read,
//! verified and decoded once at open and stay pinned in the [`Table`] for its lifetime, with
//! their fragmentation at the latest snapshot ([`Table::range_tombstone_set`]) prepared too, so
//! a read never does I/O for them and a table without any costs one branch.

use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use riptide_common::checksum::checksum;
use riptide_common::fs::{FileSystem, RandomAccessFile, RealFs};
use riptide_common::key::{MAX_SEQNO, compare_internal_keys, parse_internal_key};
use riptide_common::range_del::{RangeTombstone, RangeTombstoneSet};
use riptide_common::{Error, IoResultExt, Result, SeqNo, ValueKind};

use crate::block::{Block, BlockIter};
use crate::cache::{BlockCache, CacheId, CachedBlock};
use crate::compression::{TYPE_NONE, TYPE_ZSTD, decompress_zstd};
use crate::filter::BloomFilter;
use crate::format::{
    ALIGNED_FORMAT_VERSION, BLOCK_TRAILER_LEN, BlockHandle, FOOTER_LEN, Footer, MIN_FOOTER_LEN,
};
use crate::options::{
    MAX_ALIGNED_BLOCK_SIZE, MIN_ALIGNED_BLOCK_SIZE, SMALL_FILTER_PINNED, TableReadOptions,
};
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
    /// Times the index block was read from the file (at open when pinned, else on cache
    /// misses).
    pub index_reads: u64,
    /// Times the filter block was read from the file (at open when pinned, else on cache
    /// misses).
    pub filter_reads: u64,
}

/// Where a table's index block lives.
enum IndexSource {
    /// Read at open, kept for the table's lifetime.
    Pinned(Arc<Block>),
    /// Fetched through this cache on demand.
    Cached(Arc<BlockCache>),
}

/// Where a table's bloom filter lives.
enum FilterSource {
    /// Read at open, kept for the table's lifetime.
    Pinned(BloomFilter),
    /// Fetched through this cache on demand.
    Cached(Arc<BlockCache>),
}

/// A block or filter either borrowed from the table (pinned) or shared with the cache.
pub(crate) enum Held<'a, T> {
    /// Pinned in the table.
    Borrowed(&'a T),
    /// From the block cache.
    Shared(Arc<T>),
}

impl<T> Deref for Held<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        match self {
            Held::Borrowed(t) => t,
            Held::Shared(t) => t,
        }
    }
}

/// The bytes of one large read of consecutive data blocks, for [`Table::scan_iter`].
#[derive(Debug)]
pub(crate) struct Readahead {
    /// Bytes fetched per read (at least one block).
    window: usize,
    /// File offset of `buf[0]`.
    start: u64,
    buf: Vec<u8>,
}

impl Readahead {
    fn new(window: usize) -> Self {
        Readahead {
            window,
            start: 0,
            buf: Vec::new(),
        }
    }

    /// True when the buffer holds the `len` bytes at `offset`.
    fn covers(&self, offset: u64, len: usize) -> bool {
        offset >= self.start && offset + len as u64 <= self.start + self.buf.len() as u64
    }
}

/// The first read-ahead of an iterator that reads consecutive blocks from the file.
pub const AUTO_READAHEAD_INITIAL: usize = 16 * 1024;
/// The largest read-ahead of such an iterator (each further read doubles it up to this).
pub const AUTO_READAHEAD_MAX: usize = 256 * 1024;
/// The most a read-ahead limit makes an iterator read at once after a jump (see
/// [`AutoReadahead`]): eight 4 KiB blocks, a range of a few hundred short rows. The limit is
/// where the scan may end at most (a query with `LIMIT 1` over a wide range stops far
/// before it), so this bounds what a wrong guess costs; a scan that goes on reads ahead in
/// growing windows as any other.
pub const SPAN_READAHEAD_MAX: usize = 32 * 1024;
/// Consecutive blocks an iterator reads from the file, one at a time, before it reads ahead:
/// the block a seek lands in, then read-ahead from the next one on. A positioning read of
/// a row or two stays in its block; one that steps into the next block is a range scan (a
/// range of 100 rows, 20 KiB, then costs two reads, not five).
pub const AUTO_READAHEAD_AFTER: u32 = 1;

/// Read-ahead that a user's iterator turns on by itself (RocksDB's auto read-ahead): tables
/// are opened with random-access advice (no kernel read-ahead), so a point read or a short
/// range reads only its blocks, but a long forward scan should not pay one read per block.
/// After [`AUTO_READAHEAD_AFTER`] blocks read from the file one after another, each further
/// miss reads [`AUTO_READAHEAD_INITIAL`] bytes, doubling up to [`AUTO_READAHEAD_MAX`]. Blocks
/// taken from the buffer enter the block cache like any other read by a user. Any jump
/// (a seek elsewhere, a step backwards) starts over and frees the buffer.
///
/// When the iterator knows where its scan ends (a read-ahead limit, see
/// [`riptide_common::InternalIterator::set_readahead_limit`]), the first miss after a jump
/// reads every block up to the one holding the limit at once (at most
/// [`SPAN_READAHEAD_MAX`] bytes): a range over three blocks of a level is one read, not two.
#[derive(Debug)]
pub(crate) struct AutoReadahead {
    /// Where the block after the last one loaded starts.
    next_offset: u64,
    /// Consecutive blocks read from the file (not the cache) since the last jump.
    file_reads: u32,
    buf: Readahead,
}

impl AutoReadahead {
    pub(crate) fn new() -> Self {
        AutoReadahead {
            next_offset: u64::MAX,
            file_reads: 0,
            buf: Readahead::new(0),
        }
    }

    /// Notes that the block at `offset` of `len` bytes (trailer included) is wanted; one
    /// that does not follow the last one starts over (no file reads counted, no buffer).
    fn follow(&mut self, offset: u64, len: u64) {
        if offset != self.next_offset {
            self.file_reads = 0;
            self.buf = Readahead::new(0);
        }
        self.next_offset = offset.saturating_add(len);
    }
}

/// Checks a table's data block alignment against its format version: an aligned table
/// (format 3) names a power of two from 512 to 1 MiB, older formats none.
fn check_alignment(props: &TableProperties) -> Result<()> {
    let align = props.block_align;
    let aligned = props.format_version >= ALIGNED_FORMAT_VERSION;
    let valid = align.is_power_of_two()
        && (MIN_ALIGNED_BLOCK_SIZE as u64..=MAX_ALIGNED_BLOCK_SIZE as u64).contains(&align);
    match (aligned, align) {
        (false, 0) => Ok(()),
        (true, _) if valid => Ok(()),
        (false, a) => Err(Error::corruption(format!(
            "format version {} table claims data block alignment {a} (only version \
             {ALIGNED_FORMAT_VERSION} aligns)",
            props.format_version
        ))),
        (true, a) => Err(Error::corruption(format!(
            "aligned table (format version {}) has data block alignment {a}, not a power of \
             two from {MIN_ALIGNED_BLOCK_SIZE} to {MAX_ALIGNED_BLOCK_SIZE}",
            props.format_version
        ))),
    }
}

/// Buffers reused by [`Table::get`] on each thread, so a lookup on a warm cache allocates
/// nothing but its result.
#[derive(Default)]
struct Scratch {
    target: Vec<u8>,
    index_key: Vec<u8>,
    data_key: Vec<u8>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = const {
        Cell::new(Scratch {
            target: Vec::new(),
            index_key: Vec::new(),
            data_key: Vec::new(),
        })
    };
}

thread_local! {
    /// Data blocks consulted by point lookups on this thread (cached or read), for the read
    /// amplification statistic (see [`data_blocks_read_by_gets`]).
    static GET_DATA_BLOCKS: Cell<u64> = const { Cell::new(0) };
}

/// How many data blocks point lookups ([`Table::get`], [`Table::get_with`]) on the calling
/// thread have consulted so far, from the cache or from the file. A caller measures the blocks
/// one lookup touched as the difference around it: the per-get read amplification.
pub fn data_blocks_read_by_gets() -> u64 {
    GET_DATA_BLOCKS.try_with(Cell::get).unwrap_or(0)
}

thread_local! {
    /// Bloom filter checks of point lookups on this thread and how many of them ruled the
    /// table out (see [`bloom_checks_by_gets`]).
    static GET_BLOOM: Cell<BloomChecks> = const { Cell::new(BloomChecks { checked: 0, useful: 0 }) };
}

/// How many entries (versions and tombstones) a key range holds, estimated from index
/// blocks ([`Table::approximate_entries`]): the estimate, and the part of it that is sure to
/// lie in the range. Estimates of several tables add up (`+`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryEstimate {
    /// The estimate, to within about a data block per table.
    pub about: u64,
    /// A lower bound: the entries of the data blocks wholly inside the range (`<= about`).
    pub at_least: u64,
}

impl EntryEstimate {
    /// The same number of entries known exactly (counted, not estimated).
    pub fn exact(n: u64) -> Self {
        EntryEstimate {
            about: n,
            at_least: n,
        }
    }
}

/// The estimate of two disjoint sources of the same range together (saturating).
impl std::ops::Add for EntryEstimate {
    type Output = EntryEstimate;

    fn add(self, other: EntryEstimate) -> EntryEstimate {
        EntryEstimate {
            about: self.about.saturating_add(other.about),
            at_least: self.at_least.saturating_add(other.at_least),
        }
    }
}

/// Bloom filter checks made by point lookups: how many, and how many answered "not here"
/// (RocksDB's `rocksdb.bloom.filter.useful`; the others are its `full.positive`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BloomChecks {
    /// Filters consulted.
    pub checked: u64,
    /// Of those, filters that ruled the key out, so the table was not searched.
    pub useful: u64,
}

impl BloomChecks {
    /// The checks made since `earlier` (a reading of the same thread's counters).
    pub fn since(self, earlier: BloomChecks) -> BloomChecks {
        BloomChecks {
            checked: self.checked.wrapping_sub(earlier.checked),
            useful: self.useful.wrapping_sub(earlier.useful),
        }
    }
}

/// The bloom filter checks point lookups ([`Table::get`], [`Table::get_with`]) on the
/// calling thread have made so far. As with [`data_blocks_read_by_gets`], a caller counts one
/// lookup's checks as the difference around it and adds them to shared statistics once.
pub fn bloom_checks_by_gets() -> BloomChecks {
    GET_BLOOM.try_with(Cell::get).unwrap_or_default()
}

/// Runs `f` with this thread's scratch buffers (fresh ones if they are in use, e.g. by a
/// lookup nested in a `get_with` callback, or gone at thread exit).
#[inline]
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut s = SCRATCH.try_with(Cell::take).unwrap_or_default();
    let r = f(&mut s);
    let _ = SCRATCH.try_with(|c| c.set(s));
    r
}

/// Kind byte of a seek target: sorts before every real version with the same seqno (as
/// `riptide_common::key::seek_key`).
const SEEK_KIND: u64 = 0xFF;

/// Writes into `buf` (cleared first) the internal key that `seek` uses to find the newest
/// version of `user_key` visible at `snapshot`; equal to `riptide_common::key::seek_key`.
#[inline]
fn encode_seek_key(buf: &mut Vec<u8>, user_key: &[u8], snapshot: SeqNo) {
    buf.clear();
    buf.extend_from_slice(user_key);
    buf.extend_from_slice(&(((snapshot & MAX_SEQNO) << 8) | SEEK_KIND).to_le_bytes());
}

/// An open, immutable table. Shared through `Arc`; every method takes `&self` and reads with
/// positional I/O, so any number of threads may use it at once. Its file descriptor closes
/// when the last `Arc` drops.
pub struct Table {
    id: CacheId,
    path: PathBuf,
    file: Box<dyn RandomAccessFile>,
    file_size: u64,
    /// Data blocks live in `[0, data_end)` (the filter block starts at `data_end`).
    data_end: u64,
    /// Metablocks live in `[0, meta_end)` (the footer starts at `meta_end`).
    meta_end: u64,
    index_handle: BlockHandle,
    filter_handle: BlockHandle,
    index: IndexSource,
    filter: FilterSource,
    props: TableProperties,
    /// The range tombstones, sorted by internal key (start ascending, seqno descending);
    /// empty when the table has none.
    range_dels: Arc<Vec<RangeTombstone>>,
    /// `range_dels` fragmented at the latest snapshot (every tombstone visible).
    range_del_set: Arc<RangeTombstoneSet>,
    /// Largest seqno of `range_dels` (0 when empty).
    range_del_max_seqno: SeqNo,
    cache: Option<Arc<BlockCache>>,
    blocks_read: AtomicU64,
    bytes_read: AtomicU64,
    filter_skips: AtomicU64,
    index_reads: AtomicU64,
    filter_reads: AtomicU64,
    /// Count of open tables to decrement on drop (a [`TableCache`](crate::TableCache)'s).
    open_counter: Option<Arc<AtomicU64>>,
    /// Entries of the data blocks [`approximate_entries`](Self::approximate_entries) sampled,
    /// by block offset (the table never changes, so neither do they): the optimizer asks
    /// about the same ranges over and over, and a count from here costs neither a block
    /// cache lookup (or a read) nor a walk over the block. At most
    /// [`SAMPLED_BLOCKS_KEPT`] blocks; then it starts over.
    sampled_entries: Mutex<HashMap<u64, u32>>,
}

/// How many sampled data blocks' entry counts a table keeps: a hash map of 2,048 slots of
/// 17 bytes (offset, count, control byte), about 35 KiB per table at most, outside the block
/// cache's budget (50 tables of 64 MiB, 3 GiB of data: under 2 MiB). Ranges that start in
/// more blocks than this make the map start over, and each estimate then costs what it did
/// without it.
const SAMPLED_BLOCKS_KEPT: usize = 1024;

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("file_size", &self.file_size)
            .field("index_and_filter_cached", &self.index_and_filter_cached())
            .finish()
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if let Some(c) = &self.open_counter {
            c.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Table {
    /// Opens the table at `path` with the default [`TableReadOptions`] (index and filter in
    /// `cache` when one is given, else pinned) and a process-unique [`CacheId`]. See
    /// [`open_with_id`](Self::open_with_id).
    pub fn open(path: &Path, cache: Option<Arc<BlockCache>>) -> Result<Arc<Table>> {
        Self::open_with_options(path, cache, &TableReadOptions::default())
    }

    /// Opens the table at `path` with `opts` and a process-unique [`CacheId`]. See
    /// [`open_with_id`](Self::open_with_id).
    pub fn open_with_options(
        path: &Path,
        cache: Option<Arc<BlockCache>>,
        opts: &TableReadOptions,
    ) -> Result<Arc<Table>> {
        Self::open_with_id(path, cache, opts, CacheId::unique())
    }

    /// Opens the table at `path`, keying its blocks in `cache` by `id` (blocks already cached
    /// under `id`, e.g. by an earlier open of the same file, are used).
    ///
    /// Reads and verifies the footer and the properties block. When the index and filter are
    /// pinned (`cache` is `None` or `opts.cache_index_and_filter` is false) it also reads and
    /// verifies them and checks every index entry, as when they are later loaded through the
    /// cache. Damage is reported as `Corruption` naming the file and the block offset. Data
    /// blocks are read on demand, through `cache` if given.
    pub fn open_with_id(
        path: &Path,
        cache: Option<Arc<BlockCache>>,
        opts: &TableReadOptions,
        id: CacheId,
    ) -> Result<Arc<Table>> {
        Self::open_counted(&RealFs, path, cache, opts, id, None)
    }

    /// [`open_with_id`](Self::open_with_id) on the file system `fs`: the file is opened and
    /// every later read of this table goes through it.
    pub fn open_in(
        fs: &dyn FileSystem,
        path: &Path,
        cache: Option<Arc<BlockCache>>,
        opts: &TableReadOptions,
        id: CacheId,
    ) -> Result<Arc<Table>> {
        Self::open_counted(fs, path, cache, opts, id, None)
    }

    /// [`open_with_id`](Self::open_with_id) that increments `open_counter` on success and
    /// decrements it when the table drops.
    pub(crate) fn open_counted(
        fs: &dyn FileSystem,
        path: &Path,
        cache: Option<Arc<BlockCache>>,
        opts: &TableReadOptions,
        id: CacheId,
        open_counter: Option<Arc<AtomicU64>>,
    ) -> Result<Arc<Table>> {
        let file = fs.open_read(path).at("open table", path)?;
        // Point reads and seeks land anywhere in a table: no kernel read-ahead around them
        // (iterators read ahead themselves, see `AutoReadahead`). Advice only: a refusal leaves the
        // reads as they were, so it is no reason to fail the open.
        let _ = file.advise_random();
        let file_size = file.len().at("stat table", path)?;
        let ctx = || format!("table {}", path.display());
        if file_size < MIN_FOOTER_LEN as u64 {
            return Err(Error::corruption(format!(
                "file of {file_size} bytes is too short to be a Riptide table"
            ))
            .with_context(ctx()));
        }
        // The footer's length depends on its version, which sits in its last bytes: read
        // as much as the longest footer, then decode from the end.
        let tail_len = file_size.min(FOOTER_LEN as u64);
        let tail_offset = file_size - tail_len;
        let mut fbuf = vec![0u8; FOOTER_LEN.min(tail_len as usize)];
        file.read_exact_at(&mut fbuf, tail_offset)
            .at("read table footer", path)?;
        let footer = Footer::decode(&fbuf)
            .map_err(|e| {
                let at = file_size.saturating_sub(MIN_FOOTER_LEN as u64);
                e.with_context(format!("footer near offset {at}"))
            })
            .map_err(|e| e.with_context(ctx()))?;
        let footer_offset = file_size - footer.encoded_len() as u64;
        if footer.properties.end_with_trailer() != Some(footer_offset) {
            return Err(Error::corruption(format!(
                "properties block ({}+{}) does not end at the footer (offset {footer_offset})",
                footer.properties.offset, footer.properties.size
            ))
            .with_context(ctx()));
        }
        let mut metablocks = vec![("index", footer.index), ("filter", footer.filter)];
        metablocks.extend(footer.range_del.map(|h| ("range-del", h)));
        for (what, h) in metablocks {
            if h.end_with_trailer().is_none_or(|e| e > footer_offset) {
                return Err(Error::corruption(format!(
                    "{what} block ({}+{}) runs past the footer (offset {footer_offset})",
                    h.offset, h.size
                ))
                .with_context(ctx()));
            }
        }
        let cached = match &cache {
            Some(c) if opts.cache_index_and_filter => Some(Arc::clone(c)),
            _ => None,
        };
        let mut table = Table {
            id,
            path: path.to_path_buf(),
            file,
            file_size,
            // Metablocks follow the data: data blocks must end before the filter block.
            data_end: footer.filter.offset,
            meta_end: footer_offset,
            index_handle: footer.index,
            filter_handle: footer.filter,
            index: IndexSource::Pinned(Arc::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0])?)),
            filter: FilterSource::Pinned(BloomFilter::disabled()),
            props: TableProperties::default(),
            range_dels: Arc::new(Vec::new()),
            range_del_set: Arc::new(RangeTombstoneSet::empty()),
            range_del_max_seqno: 0,
            cache,
            blocks_read: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            filter_skips: AtomicU64::new(0),
            index_reads: AtomicU64::new(0),
            filter_reads: AtomicU64::new(0),
            open_counter: None,
            sampled_entries: Mutex::new(HashMap::new()),
        };
        let props_block = Block::new(table.read_block_contents(
            footer.properties,
            "properties",
            footer_offset,
        )?)
        .map_err(|e| table.block_error(e, "properties", footer.properties.offset))?;
        let mut props = TableProperties::decode(&props_block)
            .map_err(|e| table.block_error(e, "properties", footer.properties.offset))?;
        props.file_size = file_size;
        props.format_version = footer.version;
        check_alignment(&props)
            .map_err(|e| table.block_error(e, "properties", footer.properties.offset))?;
        table.props = props;
        table.load_range_tombstones(footer.range_del)?;
        match cached {
            None => {
                table.filter = FilterSource::Pinned(table.load_filter()?);
                table.index = IndexSource::Pinned(Arc::new(table.load_index()?));
            }
            Some(cache) => {
                table.filter = if footer.filter.size <= SMALL_FILTER_PINNED {
                    FilterSource::Pinned(table.load_filter()?)
                } else {
                    FilterSource::Cached(Arc::clone(&cache))
                };
                table.index = IndexSource::Cached(cache);
            }
        }
        if let Some(c) = &open_counter {
            c.fetch_add(1, Ordering::Relaxed);
        }
        table.open_counter = open_counter;
        Ok(Arc::new(table))
    }

    /// Reads, verifies and decodes the range-deletion block (if any) and checks its count
    /// against the properties.
    fn load_range_tombstones(&mut self, handle: Option<BlockHandle>) -> Result<()> {
        let expected = self.props.range_deletes;
        let Some(h) = handle else {
            // Version-1 tables counted range-delete point entries here (never written).
            if expected != 0 && self.props.format_version >= 2 {
                return Err(self.block_error(
                    Error::corruption(format!(
                        "properties count {expected} range deletes but the footer names no \
                         range-del block"
                    )),
                    "properties",
                    self.meta_end,
                ));
            }
            return Ok(());
        };
        let data = self.read_block_contents(h, "range-del", self.meta_end)?;
        let block = Block::new(data).map_err(|e| self.block_error(e, "range-del", h.offset))?;
        let tombstones =
            decode_range_dels(&block).map_err(|e| self.block_error(e, "range-del", h.offset))?;
        if tombstones.len() as u64 != expected {
            return Err(self.block_error(
                Error::corruption(format!(
                    "range-del block holds {} tombstones, properties say {expected}",
                    tombstones.len()
                )),
                "range-del",
                h.offset,
            ));
        }
        self.range_del_max_seqno = tombstones.iter().map(|t| t.seqno).max().unwrap_or(0);
        self.range_del_set = Arc::new(RangeTombstoneSet::new(&tombstones, SeqNo::MAX));
        self.range_dels = Arc::new(tombstones);
        Ok(())
    }

    /// Reads, verifies and parses the filter block.
    fn load_filter(&self) -> Result<BloomFilter> {
        let h = self.filter_handle;
        let data = self.read_block_contents(h, "filter", self.meta_end)?;
        self.filter_reads.fetch_add(1, Ordering::Relaxed);
        BloomFilter::new(data).map_err(|e| self.block_error(e, "filter", h.offset))
    }

    /// Reads and verifies the index block and checks every entry against the data area and
    /// the properties.
    fn load_index(&self) -> Result<Block> {
        let h = self.index_handle;
        let data = self.read_block_contents(h, "index", self.meta_end)?;
        self.index_reads.fetch_add(1, Ordering::Relaxed);
        let index = Block::new(data).map_err(|e| self.block_error(e, "index", h.offset))?;
        let blocks = self
            .check_index(&index)
            .map_err(|e| self.block_error(e, "index", h.offset))?;
        if blocks != self.props.data_blocks {
            return Err(self.block_error(
                Error::corruption(format!(
                    "index lists {blocks} data blocks, properties say {}",
                    self.props.data_blocks
                )),
                "index",
                h.offset,
            ));
        }
        Ok(index)
    }

    /// `offset` rounded up to the data blocks' alignment (itself when they are packed).
    fn aligned_up(&self, offset: u64) -> u64 {
        match self.props.block_align {
            0 => offset,
            a => offset.div_ceil(a).saturating_mul(a),
        }
    }

    /// The bytes from the start of data block `handle` to the start of the next one: the
    /// block, its trailer, and in an aligned table the padding after it. The handle comes
    /// from disk and is not checked yet (callers check it before reading the block), so a
    /// corrupt size saturates here instead of overflowing.
    pub(crate) fn block_span(&self, handle: BlockHandle) -> u64 {
        let end = handle
            .offset
            .saturating_add(handle.size)
            .saturating_add(BLOCK_TRAILER_LEN as u64);
        self.aligned_up(end).saturating_sub(handle.offset)
    }

    /// Checks that index entries decode to contiguous (in an aligned table: separated by
    /// padding shorter than the alignment), in-bounds handles; returns their count.
    fn check_index(&self, index: &Block) -> Result<u64> {
        let mut it = index.iter();
        it.seek_to_first()?;
        let mut expected_offset = 0u64;
        let mut n = 0u64;
        while it.valid() {
            parse_internal_key(it.key())?;
            let h = BlockHandle::decode(it.value())?;
            // In an aligned table the block after a padding gap starts at the next
            // multiple of the alignment (the gap is shorter than one alignment).
            let want = self.aligned_up(expected_offset);
            if h.offset != want {
                return Err(Error::corruption(format!(
                    "index entry {n} points at offset {}, expected {want}",
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

    /// Reads, verifies and decompresses the block at `handle`, which must end (trailer
    /// included) at or before `limit`.
    fn read_block_contents(&self, handle: BlockHandle, what: &str, limit: u64) -> Result<Vec<u8>> {
        let size = self.checked_block_size(handle, what, limit)?;
        let mut buf = vec![0u8; size + BLOCK_TRAILER_LEN];
        self.file.read_exact_at(&mut buf, handle.offset).at(
            &format!("read {what} block at offset {} of", handle.offset),
            &self.path,
        )?;
        self.verify_block_contents(buf, handle, what)
    }

    /// The size of the block at `handle` without its trailer, after checking that the block
    /// and its trailer end by `limit`.
    fn checked_block_size(&self, handle: BlockHandle, what: &str, limit: u64) -> Result<usize> {
        let end = handle.end_with_trailer().filter(|&e| e <= limit);
        let len = end.and_then(|_| usize::try_from(handle.size).ok());
        len.ok_or_else(|| {
            self.block_error(
                Error::corruption(format!(
                    "block of {} bytes runs past offset {limit}",
                    handle.size
                )),
                what,
                handle.offset,
            )
        })
    }

    /// Checks the trailer of `buf` (the block at `handle` with its trailer, as read) and
    /// returns the block's contents, decompressed.
    fn verify_block_contents(
        &self,
        mut buf: Vec<u8>,
        handle: BlockHandle,
        what: &str,
    ) -> Result<Vec<u8>> {
        let size = buf.len().saturating_sub(BLOCK_TRAILER_LEN);
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
            && let Some(b) = cache.get_data(self.id, handle.offset)
        {
            return Ok(b);
        }
        self.read_data_block(handle)
    }

    /// The data block at `handle`, read from the file alone and put into the cache (the
    /// cache has been asked already).
    fn read_data_block(&self, handle: BlockHandle) -> Result<Arc<Block>> {
        let data = self.read_block_contents(handle, "data", self.data_end)?;
        self.blocks_read.fetch_add(1, Ordering::Relaxed);
        self.bytes_read
            .fetch_add(handle.size + BLOCK_TRAILER_LEN as u64, Ordering::Relaxed);
        let block =
            Arc::new(Block::new(data).map_err(|e| self.block_error(e, "data", handle.offset))?);
        if let Some(cache) = &self.cache {
            cache.insert(
                self.id,
                handle.offset,
                CachedBlock::Data(Arc::clone(&block)),
            );
        }
        Ok(block)
    }

    /// The data block at `handle` for a user's iterator: [`Self::data_block`], reading ahead
    /// once the iterator reads consecutive blocks from the file (see [`AutoReadahead`]).
    /// `span_end` tells, when asked (a miss right after a jump), where the blocks the scan
    /// is known to need end: the offset just past the last one (`None`: not known).
    pub(crate) fn data_block_auto(
        &self,
        handle: BlockHandle,
        auto: &mut AutoReadahead,
        span_end: impl FnOnce() -> Result<Option<u64>>,
    ) -> Result<Arc<Block>> {
        auto.follow(handle.offset, self.block_span(handle));
        let Some(cache) = &self.cache else {
            return self.data_block(handle);
        };
        if let Some(b) = cache.get_data(self.id, handle.offset) {
            return Ok(b);
        }
        let len = self.checked_block_size(handle, "data", self.data_end)? + BLOCK_TRAILER_LEN;
        if !auto.buf.covers(handle.offset, len) {
            // A jump reset the count (and the buffer), so the first blocks after one are
            // read alone, unless the scan is known to need the blocks after it.
            if auto.file_reads == 0
                && let Some(end) = span_end()?
                && end > handle.offset + len as u64
            {
                // `span_end` stops within SPAN_READAHEAD_MAX of the landing block.
                auto.file_reads = AUTO_READAHEAD_AFTER;
                auto.buf.window = (end - handle.offset) as usize;
            } else if auto.file_reads < AUTO_READAHEAD_AFTER {
                auto.file_reads += 1;
                return self.read_data_block(handle);
            } else {
                auto.buf.window = match auto.buf.window {
                    0 => AUTO_READAHEAD_INITIAL,
                    w => (w * 2).min(AUTO_READAHEAD_MAX),
                };
            }
        }
        let block = self.read_through(handle, &mut auto.buf)?;
        cache.insert(
            self.id,
            handle.offset,
            CachedBlock::Data(Arc::clone(&block)),
        );
        Ok(block)
    }

    /// The data block at `handle` for a sequential scan that must not disturb the block
    /// cache (compaction): a cached copy is used, but a block read from the file is not
    /// inserted. Reads go through `readahead`, which fetches many blocks per read.
    pub(crate) fn data_block_for_scan(
        &self,
        handle: BlockHandle,
        readahead: &mut Readahead,
    ) -> Result<Arc<Block>> {
        if let Some(cache) = &self.cache
            && let Some(b) = cache.get_data(self.id, handle.offset)
        {
            return Ok(b);
        }
        self.read_through(handle, readahead)
    }

    /// The data block at `handle`, taken from `readahead`'s buffer, which is refilled with
    /// one read of `readahead.window` bytes (at least the block) from the block on when it
    /// does not hold it. Not cached here.
    fn read_through(&self, handle: BlockHandle, readahead: &mut Readahead) -> Result<Arc<Block>> {
        let size = self.checked_block_size(handle, "data", self.data_end)?;
        let len = size + BLOCK_TRAILER_LEN;
        if !readahead.covers(handle.offset, len) {
            // One read of up to `readahead.window` bytes, never past the data blocks.
            let want = readahead.window.max(len) as u64;
            let take = want.min(self.data_end - handle.offset) as usize;
            readahead.buf.resize(take, 0);
            readahead.start = handle.offset;
            let read = self.file.read_exact_at(&mut readahead.buf, handle.offset);
            if read.is_err() {
                readahead.buf.clear();
            }
            read.at(
                &format!(
                    "read {take} bytes of data blocks at offset {} of",
                    handle.offset
                ),
                &self.path,
            )?;
        }
        let from = (handle.offset - readahead.start) as usize;
        let raw = readahead
            .buf
            .get(from..from + len)
            .ok_or_else(|| {
                self.block_error(
                    Error::corruption("block outside the read-ahead window".to_string()),
                    "data",
                    handle.offset,
                )
            })?
            .to_vec();
        let data = self.verify_block_contents(raw, handle, "data")?;
        self.blocks_read.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(len as u64, Ordering::Relaxed);
        Ok(Arc::new(
            Block::new(data).map_err(|e| self.block_error(e, "data", handle.offset))?,
        ))
    }

    /// The index block through `cache`, read (and cached) on a miss.
    fn cached_index(&self, cache: &BlockCache) -> Result<Arc<Block>> {
        let offset = self.index_handle.offset;
        if let Some(b) = cache.get_index(self.id, offset) {
            return Ok(b);
        }
        let b = Arc::new(self.load_index()?);
        cache.insert(self.id, offset, CachedBlock::Index(Arc::clone(&b)));
        Ok(b)
    }

    /// The index block: pinned, cached, or read now.
    #[inline]
    fn index_block(&self) -> Result<Held<'_, Block>> {
        match &self.index {
            IndexSource::Pinned(b) => Ok(Held::Borrowed(b)),
            IndexSource::Cached(c) => self.cached_index(c).map(Held::Shared),
        }
    }

    /// The index block as an `Arc` (for iterators, which keep it).
    pub(crate) fn index_arc(&self) -> Result<Arc<Block>> {
        match &self.index {
            IndexSource::Pinned(b) => Ok(Arc::clone(b)),
            IndexSource::Cached(c) => self.cached_index(c),
        }
    }

    /// The bloom filter: pinned, cached, or read now.
    #[inline]
    fn filter(&self) -> Result<Held<'_, BloomFilter>> {
        let cache = match &self.filter {
            FilterSource::Pinned(f) => return Ok(Held::Borrowed(f)),
            FilterSource::Cached(c) => c,
        };
        let offset = self.filter_handle.offset;
        if let Some(f) = cache.get_filter(self.id, offset) {
            return Ok(Held::Shared(f));
        }
        let f = Arc::new(self.load_filter()?);
        cache.insert(self.id, offset, CachedBlock::Filter(Arc::clone(&f)));
        Ok(Held::Shared(f))
    }

    /// Decodes an index entry's value into a handle, with file context on failure.
    pub(crate) fn decode_handle(&self, value: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode(value).map_err(|e| self.block_error(e, "index", self.index_offset()))
    }

    pub(crate) fn index_offset(&self) -> u64 {
        self.index_handle.offset
    }

    /// The newest version of `user_key` with seqno <= `snapshot` in this table (possibly a
    /// tombstone), or `None`. Consults the bloom filter first.
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Result<Option<TableValue>> {
        self.get_with(user_key, snapshot, |seqno, kind, value| TableValue {
            seqno,
            kind,
            value: value.to_vec(),
        })
    }

    /// Like [`get`](Self::get), but hands the version found (seqno, kind, value bytes) to `f`
    /// instead of copying the value, and returns what `f` returns. On a warm cache this
    /// allocates nothing (the search buffers are reused per thread).
    pub fn get_with<R>(
        &self,
        user_key: &[u8],
        snapshot: SeqNo,
        f: impl FnOnce(SeqNo, ValueKind, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let (filters, may_contain) = {
            let filter = self.filter()?;
            (filter.is_enabled(), filter.may_contain(user_key))
        };
        if filters {
            let _ = GET_BLOOM.try_with(|c| {
                let mut b = c.get();
                b.checked = b.checked.wrapping_add(1);
                b.useful = b.useful.wrapping_add(u64::from(!may_contain));
                c.set(b);
            });
        }
        if !may_contain {
            self.filter_skips.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let index = self.index_block()?;
        with_scratch(|s| {
            encode_seek_key(&mut s.target, user_key, snapshot);
            let mut index_it =
                BlockIter::with_key_buffer(&*index, std::mem::take(&mut s.index_key));
            let r = self.search(&mut index_it, &s.target, user_key, &mut s.data_key, f);
            s.index_key = index_it.into_key_buffer();
            r
        })
    }

    /// The lookup of [`get_with`](Self::get_with) once the index is at hand.
    fn search<R>(
        &self,
        index: &mut BlockIter<&Block>,
        target: &[u8],
        user_key: &[u8],
        data_key: &mut Vec<u8>,
        f: impl FnOnce(SeqNo, ValueKind, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut f = Some(f);
        index
            .seek(target)
            .map_err(|e| self.block_error(e, "index", self.index_offset()))?;
        // The first block whose separator is >= target may hold only smaller keys when the
        // separator was shortened; then the answer starts the next block.
        while index.valid() {
            let handle = self.decode_handle(index.value())?;
            let block = self.data_block(handle)?;
            let _ = GET_DATA_BLOCKS.try_with(|c| c.set(c.get().wrapping_add(1)));
            let mut it = BlockIter::with_key_buffer(&*block, std::mem::take(data_key));
            // None: nothing >= target in this block; Some(r): the answer.
            let step = (|| -> Result<Option<Option<R>>> {
                it.seek(target)?;
                if !it.valid() {
                    return Ok(None);
                }
                let parsed = parse_internal_key(it.key())?;
                if parsed.user_key != user_key {
                    return Ok(Some(None));
                }
                Ok(Some(
                    f.take().map(|f| f(parsed.seqno, parsed.kind, it.value())),
                ))
            })();
            *data_key = it.into_key_buffer();
            if let Some(r) = step.map_err(|e| self.block_error(e, "data", handle.offset))? {
                return Ok(r);
            }
            index
                .next()
                .map_err(|e| self.block_error(e, "index", self.index_offset()))?;
        }
        Ok(None)
    }

    /// The handles of the data block where the first version of `user_key` is or would be
    /// and of the block after it; `None` past the last block. Reads only the index block.
    fn blocks_at(&self, user_key: &[u8]) -> Result<(Option<BlockHandle>, Option<BlockHandle>)> {
        let index = self.index_block()?;
        with_scratch(|s| {
            encode_seek_key(&mut s.target, user_key, MAX_SEQNO);
            let mut it = BlockIter::with_key_buffer(&*index, std::mem::take(&mut s.index_key));
            let handle = |it: &BlockIter<&Block>| -> Result<Option<BlockHandle>> {
                if it.valid() {
                    Ok(Some(self.decode_handle(it.value())?))
                } else {
                    Ok(None)
                }
            };
            let r = (|| {
                it.seek(&s.target)?;
                let first = handle(&it)?;
                if first.is_some() {
                    it.next()?;
                }
                Ok((first, handle(&it)?))
            })()
            .map_err(|e| self.block_error(e, "index", self.index_offset()));
            s.index_key = it.into_key_buffer();
            r
        })
    }

    /// The file offset of the data block where the first version of `user_key` is or would
    /// be (the end of the data blocks when every key of the table is smaller). Reads only the
    /// index block. RocksDB's `ApproximateOffsetOf`.
    pub fn approximate_offset_of(&self, user_key: &[u8]) -> Result<u64> {
        Ok(self
            .blocks_at(user_key)?
            .0
            .map_or(self.data_end, |h| h.offset))
    }

    /// About how many entries (versions and tombstones) the table holds from `lower`
    /// (inclusive) to `upper` (exclusive; `None`: the end), at the resolution of a data block:
    /// the data bytes between the two keys' blocks times the entries per byte of the range's
    /// second block (its first block may hold mostly smaller keys; rows and index entries of
    /// very different sizes share a table, so the table's average would be off by their
    /// ratio). Reads the index block and that one data block; a range within one block
    /// answers 0. [`EntryEstimate::at_least`] leaves out the range's first block, the one
    /// where `lower` falls, which may hold no key of the range at all: a range of a few keys
    /// that crosses a block boundary is put at a whole block by `about`, at 0 by `at_least`.
    pub fn approximate_entries(&self, lower: &[u8], upper: Option<&[u8]>) -> Result<EntryEstimate> {
        let (Some(first), second) = self.blocks_at(lower)? else {
            return Ok(EntryEstimate::default());
        };
        let end = match upper {
            Some(u) => self.approximate_offset_of(u)?,
            None => self.data_end,
        };
        let bytes = end.saturating_sub(first.offset);
        if bytes == 0 {
            return Ok(EntryEstimate::default());
        }
        let sample = second.filter(|h| h.offset < end).unwrap_or(first);
        let entries = self.entries_of_block(sample)? as f64;
        let span = self.block_span(sample) as f64;
        let first_span = self.block_span(first);
        let inside = bytes.saturating_sub(first_span);
        Ok(EntryEstimate {
            about: (bytes as f64 * entries / span).round() as u64,
            at_least: (inside as f64 * entries / span).round() as u64,
        })
    }

    /// Up to `max` user keys of the index entries that fall in `[lower, upper)` (`None`: no
    /// end), spread evenly over them, in order. There is one index entry per data block
    /// boundary (each at or past the last key of its block and before the first key of the
    /// next), so the keys cut the table's share of the range into pieces of about equal
    /// bytes: a seek to each lands at evenly spaced places of its data. Reads only the index
    /// block (twice: a count, then the picks). For sampling (`riptide::Db::sample_keys_cf`).
    pub fn index_keys(
        &self,
        lower: &[u8],
        upper: Option<&[u8]>,
        max: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let index = self.index_block()?;
        let mut target = Vec::new();
        encode_seek_key(&mut target, lower, MAX_SEQNO);
        // Calls `each` with the user key of every index entry in the range, in order.
        let walk = |each: &mut dyn FnMut(&[u8])| -> Result<()> {
            let mut it = index.iter();
            it.seek(&target)?;
            while it.valid() {
                let user = parse_internal_key(it.key())?.user_key;
                if upper.is_some_and(|u| user >= u) {
                    break;
                }
                if user >= lower {
                    each(user);
                }
                it.next()?;
            }
            Ok(())
        };
        let mut keys = Vec::new();
        let picked = (|| -> Result<()> {
            let mut count = 0usize;
            walk(&mut |_| count += 1)?;
            if count == 0 || max == 0 {
                return Ok(());
            }
            // The j-th of `max` picks is entry floor((j + 1/2) * count / max): the middle of
            // each of `max` equal shares of the entries.
            let picks = max.min(count);
            let mut seen = 0usize;
            walk(&mut |user| {
                let next = keys.len();
                if next < picks && seen == (2 * next + 1) * count / (2 * picks) {
                    keys.push(user.to_vec());
                }
                seen += 1;
            })
        })();
        picked.map_err(|e| self.block_error(e, "index", self.index_offset()))?;
        Ok(keys)
    }

    /// The number of entries of data block `handle` (remembered in `sampled_entries`).
    fn entries_of_block(&self, handle: BlockHandle) -> Result<u64> {
        if let Some(n) = self.sampled_entries.lock().get(&handle.offset) {
            return Ok(u64::from(*n));
        }
        let block = self.data_block(handle)?;
        let mut it = block.iter();
        let mut entries = 0u32;
        (|| -> Result<()> {
            it.seek_to_first()?;
            while it.valid() {
                entries = entries.saturating_add(1);
                it.next()?;
            }
            Ok(())
        })()
        .map_err(|e| self.block_error(e, "data", handle.offset))?;
        let mut kept = self.sampled_entries.lock();
        if kept.len() >= SAMPLED_BLOCKS_KEPT {
            kept.clear();
        }
        kept.insert(handle.offset, entries);
        Ok(u64::from(entries))
    }

    /// False only if the bloom filter proves `user_key` absent from this table. When the
    /// filter has to be read from the file and that fails, answers true (the error surfaces
    /// in the lookup that follows, or use [`try_may_contain`](Self::try_may_contain)).
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.try_may_contain(user_key).unwrap_or(true)
    }

    /// False only if the bloom filter proves `user_key` absent from this table; errors if the
    /// filter must be read (cache miss) and cannot be.
    #[inline]
    pub fn try_may_contain(&self, user_key: &[u8]) -> Result<bool> {
        Ok(self.filter()?.may_contain(user_key))
    }

    /// A bidirectional iterator over every entry; it keeps this table alive, and the index
    /// block (fetched at its first positioning call) for as long as it lives.
    pub fn iter(self: &Arc<Self>) -> TableIterator {
        TableIterator::new(Arc::clone(self))
    }

    /// An iterator for one forward pass over much of the table (compaction): data blocks
    /// missing from the block cache are read `readahead` bytes at a time and are not
    /// inserted into the cache, so the pass neither evicts the blocks readers use nor pays
    /// one read per block. Other tables' readers are unaffected.
    pub fn scan_iter(self: &Arc<Self>, readahead: usize) -> TableIterator {
        TableIterator::new_scan(Arc::clone(self), Readahead::new(readahead))
    }

    /// True when the table holds at least one range tombstone. Costs nothing: use it to skip
    /// the range-tombstone work for the (usual) tables without any.
    #[inline]
    pub fn has_range_tombstones(&self) -> bool {
        !self.range_dels.is_empty()
    }

    /// Every range tombstone of the table, sorted by internal key (start ascending, then
    /// seqno descending). They are read and verified at open and kept pinned, so this never
    /// fails today; the `Result` leaves room for loading them lazily.
    pub fn range_tombstones(&self) -> Result<Arc<Vec<RangeTombstone>>> {
        Ok(Arc::clone(&self.range_dels))
    }

    /// The table's range tombstones visible at `snapshot`, fragmented. Shares the set built at
    /// open when every tombstone is visible (the usual case); builds one otherwise.
    pub fn range_tombstone_set(&self, snapshot: SeqNo) -> Arc<RangeTombstoneSet> {
        if self.range_del_max_seqno <= snapshot {
            Arc::clone(&self.range_del_set)
        } else {
            Arc::new(RangeTombstoneSet::new(self.range_dels.iter(), snapshot))
        }
    }

    /// The largest seqno `<= snapshot` of this table's range tombstones covering `user_key`.
    pub fn max_covering_tombstone_seqno(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        if self.range_dels.is_empty() {
            return None;
        }
        if self.range_del_max_seqno <= snapshot {
            return self.range_del_set.max_covering_seqno(user_key);
        }
        self.range_dels
            .iter()
            .filter(|t| t.seqno <= snapshot && t.contains(user_key))
            .map(|t| t.seqno)
            .max()
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

    /// The id keying this table's blocks in the block cache.
    pub fn id(&self) -> CacheId {
        self.id
    }

    /// True when the index (and the filter, unless it is tiny) are fetched through the block
    /// cache rather than pinned in the table.
    pub fn index_and_filter_cached(&self) -> bool {
        matches!(self.index, IndexSource::Cached(_))
    }

    /// Bytes of memory this table holds outside the block cache: the `Table` itself, its path
    /// and properties, and the index block and filter when they are pinned.
    pub fn memory_usage(&self) -> usize {
        let index = match &self.index {
            IndexSource::Pinned(b) => b.memory_size(),
            IndexSource::Cached(_) => 0,
        };
        let filter = match &self.filter {
            FilterSource::Pinned(f) => f.memory_size(),
            FilterSource::Cached(_) => 0,
        };
        std::mem::size_of::<Table>()
            + self.path.capacity()
            + self.props.smallest_key.capacity()
            + self.props.largest_key.capacity()
            + index
            + filter
            + self
                .range_dels
                .iter()
                .map(RangeTombstone::approximate_memory)
                .sum::<usize>()
            + self
                .range_del_set
                .fragments()
                .iter()
                .map(RangeTombstone::approximate_memory)
                .sum::<usize>()
    }

    /// Read counters.
    pub fn stats(&self) -> TableStats {
        TableStats {
            blocks_read: self.blocks_read.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            filter_skips: self.filter_skips.load(Ordering::Relaxed),
            index_reads: self.index_reads.load(Ordering::Relaxed),
            filter_reads: self.filter_reads.load(Ordering::Relaxed),
        }
    }
}

/// Decodes a range-deletion block: internal keys `(start, seqno, RangeDelete)` in strictly
/// increasing order, each with a non-empty range (`start < end`, the end being the value).
fn decode_range_dels(block: &Block) -> Result<Vec<RangeTombstone>> {
    let mut it = block.iter();
    it.seek_to_first()?;
    let mut out: Vec<RangeTombstone> = Vec::new();
    let mut prev: Vec<u8> = Vec::new();
    while it.valid() {
        let n = out.len();
        let p = parse_internal_key(it.key())?;
        if p.kind != ValueKind::RangeDelete {
            return Err(Error::corruption(format!(
                "range-del entry {n} is a {:?}, not a range delete",
                p.kind
            )));
        }
        if p.seqno >= MAX_SEQNO {
            return Err(Error::corruption(format!(
                "range-del entry {n} has the reserved seqno {}",
                p.seqno
            )));
        }
        if n > 0 && compare_internal_keys(&prev, it.key()) != std::cmp::Ordering::Less {
            return Err(Error::corruption(format!(
                "range-del entry {n} is not after the previous one"
            )));
        }
        if p.user_key >= it.value() {
            return Err(Error::corruption(format!(
                "range-del entry {n} has an empty or inverted range"
            )));
        }
        out.push(RangeTombstone::new(p.user_key, it.value(), p.seqno));
        prev.clear();
        prev.extend_from_slice(it.key());
        it.next()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_key_matches_common() {
        for snapshot in [0, 1, 7, MAX_SEQNO, u64::MAX, u64::MAX >> 8] {
            for uk in [&b""[..], b"k", b"some longer key"] {
                let mut buf = vec![1, 2, 3];
                encode_seek_key(&mut buf, uk, snapshot);
                assert_eq!(buf, riptide_common::key::seek_key(uk, snapshot));
            }
        }
    }

    #[test]
    fn alignment_must_match_the_format_version() {
        let props = |format_version, block_align| TableProperties {
            format_version,
            block_align,
            ..TableProperties::default()
        };
        for ok in [
            props(1, 0),
            props(2, 0),
            props(3, 512),
            props(3, 4096),
            props(3, 1 << 20),
        ] {
            check_alignment(&ok).unwrap();
        }
        for bad in [
            props(2, 4096),
            props(3, 0),
            props(3, 4000),
            props(3, 256),
            props(3, 2 << 20),
        ] {
            let e = check_alignment(&bad).unwrap_err();
            assert_eq!(e.kind(), riptide_common::ErrorKind::Corruption, "{e}");
            assert!(e.to_string().contains("alignment"), "{e}");
        }
    }
}
