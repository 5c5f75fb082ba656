//! The shared block cache: decompressed data blocks, index blocks and bloom filters, bounded in
//! bytes.
//!
//! Keys are `(`[`CacheId`]`, block offset)`. A table's [`CacheId`] is either drawn from a
//! process-global counter by [`Table::open`](crate::Table::open) (so tables of different
//! databases sharing one cache never collide, and a reopened file never sees stale blocks), or
//! given by a [`TableCache`](crate::TableCache) as `(its owner id, file number)`, so the blocks
//! of a file closed by the table cache are found again when it is reopened.
//!
//! Every entry is charged its real memory size (see [`CachedBlock::charge`]); hits, misses and
//! inserts are counted per [`BlockKind`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::Weighter;

use crate::block::Block;
use crate::filter::BloomFilter;

/// Bytes charged per cached entry on top of the memory its block occupies (the `Arc` header,
/// the cache's key, value and bookkeeping).
pub const BLOCK_CHARGE_OVERHEAD: u64 = 96;

/// The bytes a cached block is charged: [`Block::memory_size`] plus
/// [`BLOCK_CHARGE_OVERHEAD`].
#[inline]
pub fn block_charge(block: &Block) -> u64 {
    block.memory_size() as u64 + BLOCK_CHARGE_OVERHEAD
}

/// The bytes a cached bloom filter is charged: [`BloomFilter::memory_size`] plus
/// [`BLOCK_CHARGE_OVERHEAD`].
#[inline]
pub fn filter_charge(filter: &BloomFilter) -> u64 {
    filter.memory_size() as u64 + BLOCK_CHARGE_OVERHEAD
}

/// Identifies one table's blocks in a [`BlockCache`]: an owner and a file id within it.
///
/// Owner 0 is reserved for [`CacheId::unique`]; a [`TableCache`](crate::TableCache) uses a
/// fresh owner from [`CacheId::new_owner`] and the file number, so every open of the same file
/// through it shares cached blocks. Two ids are equal only if both parts are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheId {
    owner: u64,
    file: u64,
}

static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_OWNER_ID: AtomicU64 = AtomicU64::new(1);

impl CacheId {
    /// The id of file `file` of `owner`. Blocks cached under an id are valid for whatever
    /// table is opened with the same id later: the caller must never give one id to two
    /// different files (file numbers are never reused by the engine).
    pub const fn new(owner: u64, file: u64) -> Self {
        CacheId { owner, file }
    }

    /// A process-unique id (owner 0 and a counter), never equal to any other.
    pub fn unique() -> Self {
        CacheId {
            owner: 0,
            file: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// A fresh, process-unique owner id (never 0).
    pub fn new_owner() -> u64 {
        NEXT_OWNER_ID.fetch_add(1, Ordering::Relaxed)
    }

    /// The owner part.
    pub const fn owner(self) -> u64 {
        self.owner
    }

    /// The file part.
    pub const fn file(self) -> u64 {
        self.file
    }
}

impl std::fmt::Display for CacheId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.owner, self.file)
    }
}

/// What a cached entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A data block.
    Data,
    /// An index block.
    Index,
    /// A bloom filter.
    Filter,
}

impl BlockKind {
    /// Every kind, in the order of [`CacheStats`]' per-kind fields.
    pub const ALL: [BlockKind; 3] = [BlockKind::Data, BlockKind::Index, BlockKind::Filter];

    /// `"data"`, `"index"` or `"filter"`.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Data => "data",
            BlockKind::Index => "index",
            BlockKind::Filter => "filter",
        }
    }
}

/// A cached entry: a decoded block of some kind, shared by `Arc`.
#[derive(Debug, Clone)]
pub enum CachedBlock {
    /// A data block.
    Data(Arc<Block>),
    /// An index block.
    Index(Arc<Block>),
    /// A parsed bloom filter.
    Filter(Arc<BloomFilter>),
}

impl CachedBlock {
    /// Its kind.
    pub fn kind(&self) -> BlockKind {
        match self {
            CachedBlock::Data(_) => BlockKind::Data,
            CachedBlock::Index(_) => BlockKind::Index,
            CachedBlock::Filter(_) => BlockKind::Filter,
        }
    }

    /// The bytes it is charged: the memory it occupies plus [`BLOCK_CHARGE_OVERHEAD`].
    #[inline]
    pub fn charge(&self) -> u64 {
        match self {
            CachedBlock::Data(b) | CachedBlock::Index(b) => block_charge(b),
            CachedBlock::Filter(f) => filter_charge(f),
        }
    }
}

type CacheKey = (CacheId, u64);

#[derive(Debug, Clone, Copy)]
struct BlockWeighter;

impl Weighter<CacheKey, CachedBlock> for BlockWeighter {
    #[inline]
    fn weight(&self, _key: &CacheKey, block: &CachedBlock) -> u64 {
        block.charge()
    }
}

/// Counters of one [`BlockKind`] in a [`BlockCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindStats {
    /// Lookups that found their entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Entries inserted.
    pub inserts: u64,
}

/// Counters of a [`BlockCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups that found their entry (every kind).
    pub hits: u64,
    /// Lookups that did not (every kind).
    pub misses: u64,
    /// Entries inserted (every kind).
    pub inserts: u64,
    /// Bytes currently charged.
    pub usage_bytes: u64,
    /// The byte bound.
    pub capacity_bytes: u64,
    /// Entries currently held.
    pub entries: u64,
    /// Data block counters.
    pub data: KindStats,
    /// Index block counters.
    pub index: KindStats,
    /// Bloom filter counters.
    pub filter: KindStats,
}

impl CacheStats {
    /// The counters of `kind`.
    pub fn kind(&self, kind: BlockKind) -> KindStats {
        match kind {
            BlockKind::Data => self.data,
            BlockKind::Index => self.index,
            BlockKind::Filter => self.filter,
        }
    }
}

/// Counters of one kind, on their own cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct KindCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
}

impl KindCounters {
    fn load(&self) -> KindStats {
        KindStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            inserts: self.inserts.load(Ordering::Relaxed),
        }
    }
}

/// A concurrent cache of decoded blocks (data, index, filter) shared by many tables, bounded
/// in bytes: each entry is charged [`CachedBlock::charge`], and the total never exceeds the
/// capacity. An entry larger than a cache shard's share of the capacity is not kept.
pub struct BlockCache {
    cache: quick_cache::sync::Cache<CacheKey, CachedBlock, BlockWeighter>,
    /// The current capacity ([`BlockCache::set_capacity`] changes it).
    capacity: AtomicU64,
    data: KindCounters,
    index: KindCounters,
    filter: KindCounters,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of charged entries.
    pub fn new(capacity_bytes: u64) -> Self {
        let estimated_items = (capacity_bytes / 4096).clamp(16, 1 << 24) as usize;
        BlockCache {
            cache: quick_cache::sync::Cache::with_weighter(
                estimated_items,
                capacity_bytes,
                BlockWeighter,
            ),
            capacity: AtomicU64::new(capacity_bytes),
            data: KindCounters::default(),
            index: KindCounters::default(),
            filter: KindCounters::default(),
        }
    }

    #[inline]
    fn counters(&self, kind: BlockKind) -> &KindCounters {
        match kind {
            BlockKind::Data => &self.data,
            BlockKind::Index => &self.index,
            BlockKind::Filter => &self.filter,
        }
    }

    /// The entry of kind `kind` cached for table `id` at `offset`; counts a hit or a miss of
    /// that kind. An entry of another kind at that key is not returned (a miss).
    #[inline]
    pub fn get(&self, kind: BlockKind, id: CacheId, offset: u64) -> Option<CachedBlock> {
        let r = self.cache.get(&(id, offset)).filter(|b| b.kind() == kind);
        let c = self.counters(kind);
        let counter = if r.is_some() { &c.hits } else { &c.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        r
    }

    /// The data block of table `id` at `offset`, if cached (counts a data hit or miss).
    #[inline]
    pub fn get_data(&self, id: CacheId, offset: u64) -> Option<Arc<Block>> {
        match self.get(BlockKind::Data, id, offset) {
            Some(CachedBlock::Data(b)) => Some(b),
            _ => None,
        }
    }

    /// The index block of table `id` at `offset`, if cached (counts an index hit or miss).
    #[inline]
    pub fn get_index(&self, id: CacheId, offset: u64) -> Option<Arc<Block>> {
        match self.get(BlockKind::Index, id, offset) {
            Some(CachedBlock::Index(b)) => Some(b),
            _ => None,
        }
    }

    /// The bloom filter of table `id` at `offset`, if cached (counts a filter hit or miss).
    #[inline]
    pub fn get_filter(&self, id: CacheId, offset: u64) -> Option<Arc<BloomFilter>> {
        match self.get(BlockKind::Filter, id, offset) {
            Some(CachedBlock::Filter(f)) => Some(f),
            _ => None,
        }
    }

    /// Caches `block` for table `id` at `offset` (replacing what was there).
    pub fn insert(&self, id: CacheId, offset: u64, block: CachedBlock) {
        self.counters(block.kind())
            .inserts
            .fetch_add(1, Ordering::Relaxed);
        self.cache.insert((id, offset), block);
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        let [data, index, filter] = BlockKind::ALL.map(|k| self.counters(k).load());
        CacheStats {
            hits: data.hits + index.hits + filter.hits,
            misses: data.misses + index.misses + filter.misses,
            inserts: data.inserts + index.inserts + filter.inserts,
            usage_bytes: self.cache.weight(),
            capacity_bytes: self.capacity.load(Ordering::Relaxed),
            entries: self.cache.len() as u64,
            data,
            index,
            filter,
        }
    }

    /// Changes the capacity to `capacity_bytes` while the cache is in use. A smaller one
    /// evicts (least useful first) until the entries fit; the cache's hash tables keep the
    /// size they were made with, so a cache grown far beyond its first capacity finds
    /// entries a little slower than one made that large.
    pub fn set_capacity(&self, capacity_bytes: u64) {
        self.cache.set_capacity(capacity_bytes);
        self.capacity.store(capacity_bytes, Ordering::Relaxed);
    }

    /// Drops every cached entry (counters are kept).
    pub fn clear(&self) {
        self.cache.clear();
    }
}
