//! Block-based sorted string tables (SSTables) of the Riptide storage engine.
//!
//! A table is an immutable file of internal-key/value entries (see [`riptide_common::key`]) in
//! [`compare_internal_keys`](riptide_common::key::compare_internal_keys) order. It is written
//! once by a [`TableWriter`] and then read concurrently through an `Arc<`[`Table`]`>`: point
//! lookups with [`Table::get`] (guarded by a whole-key bloom filter on user keys) and
//! bidirectional scans with a [`TableIterator`], which implements
//! [`InternalIterator`](riptide_common::InternalIterator).
//!
//! The file is a sequence of checksummed blocks followed by a fixed-size footer:
//!
//! ```text
//! data block 0 | ... | data block N-1 | filter block | index block | [range-del block]
//!   | properties block | footer
//! ```
//!
//! Range tombstones (`delete_range`) do not sit among the point entries: a
//! [`TableWriter::add_range_tombstone`] call (in any order) puts them in the range-deletion
//! block, read once at open and pinned ([`Table::range_tombstones`]); the table's smallest and
//! largest keys cover their extent (a largest key may be a
//! [`range_end_key`](riptide_common::range_del::range_end_key), an exclusive bound).
//!
//! Data blocks use key prefix compression with restart points and may be zstd-compressed; the
//! index block maps a separator key per data block to its [`BlockHandle`](format::BlockHandle).
//! Decompressed data blocks are shared between tables through a byte-bounded [`BlockCache`],
//! which by default also holds each table's index block and bloom filter (see
//! [`TableReadOptions`]), so the memory tables use is bounded by the cache's capacity. A
//! [`TableCache`] bounds the number of open tables (and file descriptors), closing the least
//! recently used ones.
//! The byte-level format is described in `FORMAT.md` next to this crate's `Cargo.toml`.
//!
//! Every byte read from disk is covered by a checksum, and every decode is bounds-checked:
//! damaged files produce [`ErrorKind::Corruption`](riptide_common::ErrorKind::Corruption)
//! errors that name the file and the block offset, never panics.

pub mod block;
pub mod cache;
pub mod compression;
pub mod filter;
pub mod format;
pub mod options;
pub mod properties;
pub mod table;
pub mod table_cache;
pub mod table_iter;
pub mod writer;

pub use cache::{BlockCache, BlockKind, CacheId, CacheStats, CachedBlock, KindStats};
pub use options::{Compression, TableOptions, TableReadOptions};
pub use properties::TableProperties;
pub use table::{
    AUTO_READAHEAD_AFTER, AUTO_READAHEAD_INITIAL, AUTO_READAHEAD_MAX, BloomChecks, EntryEstimate,
    SPAN_READAHEAD_MAX, Table, TableStats, TableValue, bloom_checks_by_gets,
    data_blocks_read_by_gets,
};
pub use table_cache::{TableCache, TableCacheStats};
pub use table_iter::TableIterator;
pub use writer::TableWriter;
