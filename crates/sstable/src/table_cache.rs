//! The table cache: open tables, bounded by a number of files (RocksDB's `max_open_files`).
//!
//! [`TableCache::get_or_open`] returns the open [`Table`] of a file number, opening it on a
//! miss (one thread opens, concurrent callers for the same file wait for it and share the
//! result). Beyond `max_open_files` tables the cache drops the least recently used one. A
//! dropped table stays usable by whoever still holds its `Arc`; its file descriptor closes when
//! the last one goes.
//!
//! The cache is split into shards (one per 64 files, at most 16), each an LRU list under its
//! own mutex; a lookup locks only its shard. Each shard holds its share of `max_open_files`,
//! so the total never exceeds it (LRU order is kept per shard).
//!
//! Each table is opened with the [`CacheId`] `(this cache's owner id, file number)`, so the
//! blocks it put in the block cache (data, and index and filter with
//! [`TableReadOptions::cache_index_and_filter`]) are found again when the file is reopened
//! after an eviction.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use riptide_common::Result;
use riptide_common::fs::FsRef;

use crate::cache::{BlockCache, CacheId};
use crate::options::TableReadOptions;
use crate::table::Table;

/// Counters of a [`TableCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableCacheStats {
    /// Tables opened (successful opens of a file).
    pub opens: u64,
    /// Lookups answered by an already open table (including callers that waited for a
    /// concurrent open of the same file).
    pub hits: u64,
    /// Lookups that had to open the file (successfully or not).
    pub misses: u64,
    /// Tables dropped by the cache to stay within `max_open_files`.
    pub evictions: u64,
    /// Tables dropped by [`TableCache::evict`].
    pub removals: u64,
    /// Tables the cache holds now (at most `max_open_files`).
    pub open_tables: u64,
    /// Tables opened through this cache that are still alive anywhere (held by the cache or by
    /// a caller): the file descriptors it opened that are still open.
    pub live_tables: u64,
    /// The bound on `open_tables`.
    pub max_open_files: u64,
}

/// Number of stripes of the locks that serialize opens of the same file.
const OPEN_LOCKS: usize = 64;

/// One shard: an LRU set of open tables. `tick` orders uses: the entry with the smallest tick
/// is the least recently used.
#[derive(Default)]
struct Shard {
    tables: HashMap<u64, (Arc<Table>, u64)>,
    clock: u64,
    capacity: usize,
}

impl Shard {
    #[inline]
    fn get(&mut self, file_number: u64) -> Option<Arc<Table>> {
        self.clock += 1;
        let clock = self.clock;
        let (t, tick) = self.tables.get_mut(&file_number)?;
        *tick = clock;
        Some(Arc::clone(t))
    }

    /// Inserts `table`, returning the tables evicted to make room (to drop outside the lock).
    fn insert(&mut self, file_number: u64, table: Arc<Table>) -> Vec<Arc<Table>> {
        self.clock += 1;
        let mut evicted = Vec::new();
        if let Some(old) = self.tables.insert(file_number, (table, self.clock)) {
            evicted.push(old.0);
        }
        while self.tables.len() > self.capacity {
            let lru = self
                .tables
                .iter()
                .filter(|(n, _)| **n != file_number)
                .min_by_key(|(_, (_, tick))| *tick)
                .map(|(n, _)| *n);
            match lru.and_then(|n| self.tables.remove(&n)) {
                Some((t, _)) => evicted.push(t),
                None => break,
            }
        }
        evicted
    }
}

/// Open tables keyed by file number, at most `max_open_files` of them, least recently used
/// dropped first. Thread-safe; a lookup locks one shard only.
pub struct TableCache {
    fs: FsRef,
    shards: Box<[Mutex<Shard>]>,
    open_locks: Box<[Mutex<()>]>,
    block_cache: Option<Arc<BlockCache>>,
    read_opts: TableReadOptions,
    owner: u64,
    max_open_files: usize,
    opens: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    removals: AtomicU64,
    live: Arc<AtomicU64>,
}

impl std::fmt::Debug for TableCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableCache")
            .field("owner", &self.owner)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Spreads file numbers (often consecutive) over shards and stripes.
#[inline]
fn mix(file_number: u64) -> u64 {
    file_number.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32
}

impl TableCache {
    /// A cache keeping at most `max_open_files` tables open (0 is taken as 1), opening them
    /// with `read_opts` and `block_cache` (shared by all of them).
    pub fn new(
        max_open_files: usize,
        block_cache: Option<Arc<BlockCache>>,
        read_opts: TableReadOptions,
    ) -> Self {
        let max = max_open_files.max(1);
        let wanted = (max / 64).clamp(1, 16);
        let n = 1usize << (usize::BITS - 1 - wanted.leading_zeros());
        // Shard i holds max / n tables, one more for the first max % n shards: max in all.
        let shards = (0..n)
            .map(|i| {
                Mutex::new(Shard {
                    capacity: max / n + usize::from(i < max % n),
                    ..Shard::default()
                })
            })
            .collect();
        TableCache {
            fs: riptide_common::fs::real(),
            shards,
            open_locks: (0..OPEN_LOCKS).map(|_| Mutex::new(())).collect(),
            block_cache,
            read_opts,
            owner: CacheId::new_owner(),
            max_open_files: max,
            opens: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            removals: AtomicU64::new(0),
            live: Arc::new(AtomicU64::new(0)),
        }
    }

    /// This cache, opening its tables on the file system `fs` (the real one by default).
    pub fn with_file_system(mut self, fs: FsRef) -> Self {
        self.fs = fs;
        self
    }

    /// The file system tables are opened on.
    pub fn file_system(&self) -> &FsRef {
        &self.fs
    }

    #[inline]
    #[allow(clippy::indexing_slicing)] // `% len` with len >= 1: in range, not from disk bytes.
    fn shard(&self, file_number: u64) -> &Mutex<Shard> {
        &self.shards[mix(file_number) as usize % self.shards.len()]
    }

    #[inline]
    #[allow(clippy::indexing_slicing)] // `% len` with len == OPEN_LOCKS: in range.
    fn open_lock(&self, file_number: u64) -> &Mutex<()> {
        &self.open_locks[mix(file_number) as usize % self.open_locks.len()]
    }

    /// The open table of file `file_number`, opening `path` if it is not open. Concurrent calls
    /// for the same file open it once and return the same `Arc`. A failed open is not cached
    /// (the next call tries again). The caller must give one file number one path: tables are
    /// keyed by the number alone.
    pub fn get_or_open(&self, file_number: u64, path: &Path) -> Result<Arc<Table>> {
        if let Some(t) = self.shard(file_number).lock().get(file_number) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(t);
        }
        // Opens of one file are serialized: whoever comes second finds the first one's table.
        let _opening = self.open_lock(file_number).lock();
        if let Some(t) = self.shard(file_number).lock().get(file_number) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(t);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let t = Table::open_counted(
            &*self.fs,
            path,
            self.block_cache.clone(),
            &self.read_opts,
            self.cache_id(file_number),
            Some(Arc::clone(&self.live)),
        )?;
        self.opens.fetch_add(1, Ordering::Relaxed);
        let evicted = self
            .shard(file_number)
            .lock()
            .insert(file_number, Arc::clone(&t));
        self.evictions
            .fetch_add(evicted.len() as u64, Ordering::Relaxed);
        // The evicted tables (and their descriptors, if no one else holds them) drop here,
        // outside the shard lock.
        drop(evicted);
        Ok(t)
    }

    /// The open table of `file_number` if the cache holds it (counts nothing, but marks it
    /// used).
    pub fn get(&self, file_number: u64) -> Option<Arc<Table>> {
        self.shard(file_number).lock().get(file_number)
    }

    /// Drops the table of `file_number` from the cache (for a deleted file), waiting for an
    /// open of it in progress; returns whether it was held. Holders of its `Arc` keep using
    /// it. Its blocks stay in the block cache until evicted there.
    pub fn evict(&self, file_number: u64) -> bool {
        let _opening = self.open_lock(file_number).lock();
        let removed = self.shard(file_number).lock().tables.remove(&file_number);
        let was_held = removed.is_some();
        if was_held {
            self.removals.fetch_add(1, Ordering::Relaxed);
        }
        drop(removed);
        was_held
    }

    /// Drops every table from the cache.
    pub fn clear(&self) {
        for s in self.shards.iter() {
            let tables = std::mem::take(&mut s.lock().tables);
            drop(tables);
        }
    }

    /// The block cache id the tables of `file_number` are opened with.
    pub fn cache_id(&self, file_number: u64) -> CacheId {
        CacheId::new(self.owner, file_number)
    }

    /// The block cache shared by the tables.
    pub fn block_cache(&self) -> Option<&Arc<BlockCache>> {
        self.block_cache.as_ref()
    }

    /// The options tables are opened with.
    pub fn read_options(&self) -> &TableReadOptions {
        &self.read_opts
    }

    /// The bound on open tables.
    pub fn max_open_files(&self) -> usize {
        self.max_open_files
    }

    /// Current counters.
    pub fn stats(&self) -> TableCacheStats {
        let open: usize = self.shards.iter().map(|s| s.lock().tables.len()).sum();
        TableCacheStats {
            opens: self.opens.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            removals: self.removals.load(Ordering::Relaxed),
            open_tables: open as u64,
            live_tables: self.live.load(Ordering::Relaxed),
            max_open_files: self.max_open_files as u64,
        }
    }
}
