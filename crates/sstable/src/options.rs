//! Options that shape a table as it is written.

use riptide_common::{Error, Result};

/// How data blocks are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Blocks are stored as they are.
    None,
    /// Blocks are compressed with zstd at `level` (negative levels are zstd's fast modes). A
    /// block whose compressed form does not save at least 1/8 of its size is stored
    /// uncompressed.
    Zstd {
        /// The zstd compression level, within `zstd::compression_level_range()`.
        level: i32,
    },
}

impl Compression {
    /// A short name: `"none"` or `"zstd"`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd { .. } => "zstd",
        }
    }
}

/// Options for [`TableWriter`](crate::TableWriter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    /// Target size in bytes of an uncompressed data block. A block is closed before the entry
    /// that would make it exceed this size (a single large entry makes a larger block).
    /// Default: 4096. Must be in `1..=1 GiB`.
    pub block_size: usize,
    /// Number of entries between restart points in data blocks (every restart point stores its
    /// key in full and is a target of binary search). Default: 16. Must be at least 1.
    pub restart_interval: usize,
    /// Compression of data blocks. Default: `Compression::Zstd { level: 1 }`.
    pub compression: Compression,
    /// Bits per distinct user key in the bloom filter; 0 disables the filter (every lookup reads
    /// the index and a data block). Default: 10 (about 1% false positives). At most 64.
    pub bloom_bits_per_key: u32,
    /// While a table is written, start the device write of every further this many bytes
    /// (Linux `sync_file_range`), so the file does not reach the device in one burst at its
    /// final sync, with reads queued behind it; 0: never (RocksDB `bytes_per_sync`).
    /// Default: [`DEFAULT_BYTES_PER_SYNC`].
    pub bytes_per_sync: u64,
    /// Start every data block at a multiple of `block_size` (which must then be a power of
    /// two from 512 to 1 MiB), zero bytes padding the gap after each block, and close a
    /// block before its stored bytes and trailer would pass `block_size` (RocksDB
    /// `block_align`). With the default 4096, a block read from the file is one page of
    /// the operating system's page cache instead of usually two (a packed block of about
    /// 4 KiB straddles a page boundary), so reads that miss the block cache fetch half the
    /// bytes and the page cache holds twice the blocks. Costs the padding (half an entry
    /// per block on average). Applies to tables written without compression only
    /// (compressed blocks have no fixed size; RocksDB refuses the combination): a table
    /// written with compression ignores it. Aligned tables are format version 3, which
    /// builds before it refuse. Default: false.
    pub block_align: bool,
}

/// Default [`TableOptions::bytes_per_sync`]: 1 MiB, the value RocksDB's tuning guide gives.
pub const DEFAULT_BYTES_PER_SYNC: u64 = 1 << 20;

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            restart_interval: 16,
            compression: Compression::Zstd { level: 1 },
            bloom_bits_per_key: 10,
            bytes_per_sync: DEFAULT_BYTES_PER_SYNC,
            block_align: false,
        }
    }
}

/// Largest accepted [`TableOptions::block_size`].
pub const MAX_BLOCK_SIZE: usize = 1 << 30;

/// Smallest [`TableOptions::block_size`] of an aligned table ([`TableOptions::block_align`]).
pub const MIN_ALIGNED_BLOCK_SIZE: usize = 512;

/// Largest [`TableOptions::block_size`] of an aligned table ([`TableOptions::block_align`]).
pub const MAX_ALIGNED_BLOCK_SIZE: usize = 1 << 20;

/// Largest accepted [`TableOptions::bloom_bits_per_key`].
pub const MAX_BLOOM_BITS_PER_KEY: u32 = 64;

impl TableOptions {
    /// Checks that every option is in range; `InvalidArgument` otherwise.
    pub fn validate(&self) -> Result<()> {
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(Error::invalid_argument(format!(
                "table block_size {} is outside 1..={MAX_BLOCK_SIZE}",
                self.block_size
            )));
        }
        if self.block_align
            && (!self.block_size.is_power_of_two()
                || !(MIN_ALIGNED_BLOCK_SIZE..=MAX_ALIGNED_BLOCK_SIZE).contains(&self.block_size))
        {
            return Err(Error::invalid_argument(format!(
                "table block_size {} cannot be aligned to: block_align needs a power of two \
                 from {MIN_ALIGNED_BLOCK_SIZE} to {MAX_ALIGNED_BLOCK_SIZE}",
                self.block_size
            )));
        }
        if self.restart_interval == 0 || self.restart_interval > u32::MAX as usize {
            return Err(Error::invalid_argument(format!(
                "table restart_interval {} must be at least 1",
                self.restart_interval
            )));
        }
        if self.bloom_bits_per_key > MAX_BLOOM_BITS_PER_KEY {
            return Err(Error::invalid_argument(format!(
                "table bloom_bits_per_key {} exceeds {MAX_BLOOM_BITS_PER_KEY}",
                self.bloom_bits_per_key
            )));
        }
        if let Compression::Zstd { level } = self.compression {
            let range = zstd::compression_level_range();
            if !range.contains(&level) {
                return Err(Error::invalid_argument(format!(
                    "zstd level {level} is outside {}..={}",
                    range.start(),
                    range.end()
                )));
            }
        }
        Ok(())
    }
}

impl TableOptions {
    /// The alignment of the data blocks of a table written with these options: the block
    /// size when [`TableOptions::block_align`] is on and blocks are not compressed, else
    /// `None` (blocks packed one after another).
    pub fn data_block_alignment(&self) -> Option<u64> {
        (self.block_align && self.compression == Compression::None)
            .then_some(self.block_size as u64)
    }
}

/// Options for opening and reading a table, independent of how it was written (see
/// [`Table::open_with_options`](crate::Table::open_with_options)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableReadOptions {
    /// Keep the index block and the bloom filter in the block cache, charged to its capacity
    /// and evicted like data blocks, instead of pinning them in the table for its lifetime
    /// (RocksDB's `cache_index_and_filter_blocks`). Opening then reads only the footer and the
    /// properties block; lookups and iterators fetch the index and filter through the cache,
    /// reading them from the file again after an eviction. A filter block of at most
    /// [`SMALL_FILTER_PINNED`] bytes (a disabled or nearly empty filter) is still read at open
    /// and kept, as it costs less than a cache entry. Ignored (index and filter pinned) when
    /// the table is opened without a block cache. Default: true.
    pub cache_index_and_filter: bool,
}

/// Filter blocks of at most this many stored bytes are pinned even with
/// [`TableReadOptions::cache_index_and_filter`].
pub const SMALL_FILTER_PINNED: u64 = 64;

impl Default for TableReadOptions {
    fn default() -> Self {
        TableReadOptions {
            cache_index_and_filter: true,
        }
    }
}
