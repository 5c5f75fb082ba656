//! The shared block cache: decompressed blocks, bounded in bytes.
//!
//! Keys are `(table unique id, block offset)`. The unique id is drawn from a process-global
//! counter by every [`Table::open`](crate::Table::open), so tables of different databases
//! sharing one cache never collide, and a reopened file never sees stale blocks.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::Weighter;

use crate::block::Block;

/// Bytes charged per cached block on top of its size (the `Arc`, the block header and the
/// cache's own entry).
pub const BLOCK_CHARGE_OVERHEAD: u64 = 96;

/// The bytes a cached block is charged.
#[inline]
pub fn block_charge(block: &Block) -> u64 {
    block.size() as u64 + BLOCK_CHARGE_OVERHEAD
}

type CacheKey = (u64, u64);

#[derive(Debug, Clone, Copy)]
struct BlockWeighter;

impl Weighter<CacheKey, Arc<Block>> for BlockWeighter {
    #[inline]
    fn weight(&self, _key: &CacheKey, block: &Arc<Block>) -> u64 {
        block_charge(block)
    }
}

/// Counters of a [`BlockCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups that found their block.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Blocks inserted.
    pub inserts: u64,
    /// Bytes currently charged.
    pub usage_bytes: u64,
    /// The byte bound.
    pub capacity_bytes: u64,
    /// Blocks currently held.
    pub entries: u64,
}

/// A concurrent cache of decompressed blocks shared by many tables, bounded in bytes (each
/// block is charged its size plus [`BLOCK_CHARGE_OVERHEAD`]). A block larger than a cache
/// shard's share of the capacity is not kept.
pub struct BlockCache {
    cache: quick_cache::sync::Cache<CacheKey, Arc<Block>, BlockWeighter>,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of charged blocks.
    pub fn new(capacity_bytes: u64) -> Self {
        let estimated_items = (capacity_bytes / 4096).clamp(16, 1 << 24) as usize;
        BlockCache {
            cache: quick_cache::sync::Cache::with_weighter(
                estimated_items,
                capacity_bytes,
                BlockWeighter,
            ),
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            inserts: AtomicU64::new(0),
        }
    }

    /// The block of table `table_id` at `offset`, if cached (counts a hit or a miss).
    pub fn get(&self, table_id: u64, offset: u64) -> Option<Arc<Block>> {
        let r = self.cache.get(&(table_id, offset));
        let counter = if r.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        r
    }

    /// Caches the block of table `table_id` at `offset`.
    pub fn insert(&self, table_id: u64, offset: u64, block: Arc<Block>) {
        self.inserts.fetch_add(1, Ordering::Relaxed);
        self.cache.insert((table_id, offset), block);
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            inserts: self.inserts.load(Ordering::Relaxed),
            usage_bytes: self.cache.weight(),
            capacity_bytes: self.capacity,
            entries: self.cache.len() as u64,
        }
    }

    /// Drops every cached block (counters are kept).
    pub fn clear(&self) {
        self.cache.clear();
    }
}

static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);

/// A process-unique id for a newly opened table.
pub(crate) fn next_table_id() -> u64 {
    NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed)
}
