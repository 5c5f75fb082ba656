//! Engine statistics: counters kept with relaxed atomics and a public snapshot of them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters, updated on the hot paths.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) keys_written: AtomicU64,
    pub(crate) user_bytes_written: AtomicU64,
    pub(crate) write_groups: AtomicU64,
    pub(crate) gets: AtomicU64,
    pub(crate) get_data_blocks: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) flush_bytes_written: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) compaction_bytes_read: AtomicU64,
    pub(crate) compaction_bytes_written: AtomicU64,
    pub(crate) compaction_tombstones_dropped: AtomicU64,
    pub(crate) compaction_range_deleted: AtomicU64,
    pub(crate) compaction_files_moved: AtomicU64,
    pub(crate) write_slowdowns: AtomicU64,
    pub(crate) write_slowdown_micros: AtomicU64,
    pub(crate) write_stops: AtomicU64,
    pub(crate) write_stop_micros: AtomicU64,
    pub(crate) longest_write_wait_micros: AtomicU64,
    pub(crate) flush_idle_wakeups: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// Records one slowdown (`stop == false`) or stop of `micros`.
    pub(crate) fn record_wait(&self, stop: bool, micros: u64) {
        if stop {
            Self::add(&self.write_stops, 1);
            Self::add(&self.write_stop_micros, micros);
        } else {
            Self::add(&self.write_slowdowns, 1);
            Self::add(&self.write_slowdown_micros, micros);
        }
        self.longest_write_wait_micros.fetch_max(micros, Relaxed);
    }
}

/// Bytes and files of one level of one column family.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelStats {
    /// Level number (0 is the newest).
    pub level: usize,
    /// Number of tables.
    pub files: usize,
    /// Total size of those tables in bytes.
    pub bytes: u64,
    /// The size compaction aims for (0 for L0 and for unused levels above the base level).
    pub target_bytes: u64,
    /// Compaction score (>= 1 means compaction is due); the largest over column families.
    pub score: f64,
}

/// A point-in-time copy of the engine's statistics. Print it for a text report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statistics {
    /// Keys written by the user (each put, delete, single delete counts one).
    pub keys_written: u64,
    /// Bytes of user keys and values written.
    pub user_bytes_written: u64,
    /// Write groups committed (one WAL record each); `keys_written / write_groups` shows
    /// how well group commit batches concurrent writers.
    pub write_groups: u64,
    /// Bytes appended to the WAL.
    pub wal_bytes_written: u64,
    /// WAL fsyncs.
    pub wal_syncs: u64,
    /// Point reads served.
    pub gets: u64,
    /// Data blocks those point reads consulted (from the cache or the disk); divided by
    /// `gets` this is the read amplification (see [`Statistics::data_blocks_per_get`]).
    pub get_data_blocks: u64,
    /// Memtables flushed to L0 tables.
    pub flushes: u64,
    /// Bytes of tables written by flushes.
    pub flush_bytes_written: u64,
    /// Compactions finished.
    pub compactions: u64,
    /// Bytes of tables read by compactions.
    pub compaction_bytes_read: u64,
    /// Bytes of tables written by compactions.
    pub compaction_bytes_written: u64,
    /// Tombstones compactions removed for good.
    pub compaction_tombstones_dropped: u64,
    /// Versions compactions dropped because a range delete covered them.
    pub compaction_range_deleted: u64,
    /// Table files moved down a level unchanged (trivial moves: no merge, no bytes written;
    /// counted in neither `compactions` nor the compaction bytes).
    pub compaction_files_moved: u64,
    /// Estimated bytes compaction must still rewrite (drives write back-pressure).
    pub pending_compaction_bytes: u64,
    /// Compactions running now.
    pub running_compactions: u64,
    /// Bytes held by memtables (active and frozen), all column families.
    pub memtable_bytes: u64,
    /// Frozen memtables waiting for flush, all column families.
    pub immutable_memtables: u64,
    /// Block cache hits.
    pub block_cache_hits: u64,
    /// Block cache misses.
    pub block_cache_misses: u64,
    /// Table files open now (held by the table cache or by readers using them).
    pub open_table_files: u64,
    /// Table files opened (again) because the table cache did not hold them.
    pub table_opens: u64,
    /// Bytes held by the block cache.
    pub block_cache_usage: u64,
    /// The block cache's capacity.
    pub block_cache_capacity: u64,
    /// Data block lookups served from the cache.
    pub data_block_hits: u64,
    /// Data block lookups read from a table file.
    pub data_block_misses: u64,
    /// Index block lookups served from the cache.
    pub index_block_hits: u64,
    /// Index block lookups read from a table file.
    pub index_block_misses: u64,
    /// Bloom filter lookups served from the cache.
    pub filter_block_hits: u64,
    /// Bloom filter lookups read from a table file.
    pub filter_block_misses: u64,
    /// Write groups slowed down by back-pressure (see `Options::l0_slowdown_trigger`).
    pub write_slowdowns: u64,
    /// Total microseconds of those slowdowns.
    pub write_slowdown_micros: u64,
    /// Times writes stopped until background work caught up (a last resort).
    pub write_stops: u64,
    /// Total microseconds writes were stopped.
    pub write_stop_micros: u64,
    /// The longest single slowdown or stop, in microseconds.
    pub longest_write_wait_micros: u64,
    /// Times the flush thread woke up and found no frozen memtable to flush. A few per
    /// write stop or flush request are normal; one per write stop and 100 ms is the most a
    /// stop should cause (more would be a busy loop between writers and the flush thread).
    pub flush_idle_wakeups: u64,
    /// Live snapshots.
    pub live_snapshots: u64,
    /// Files and bytes per level, summed over column families.
    pub levels: Vec<LevelStats>,
}

impl Statistics {
    /// Bytes written to disk (WAL and tables) per byte of user data; 0 before any write.
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes_written == 0 {
            return 0.0;
        }
        (self.wal_bytes_written + self.flush_bytes_written + self.compaction_bytes_written) as f64
            / self.user_bytes_written as f64
    }

    /// Total size of all tables per byte in the last (largest) level: the usual LSM
    /// estimate of space amplification (about 1 + 1/ratio when levels are balanced, more
    /// while old versions and tombstones wait in upper levels). 0 with no tables.
    pub fn space_amplification(&self) -> f64 {
        let total: u64 = self.levels.iter().map(|l| l.bytes).sum();
        match self.levels.iter().rev().find(|l| l.bytes > 0) {
            Some(last) => total as f64 / last.bytes as f64,
            None => 0.0,
        }
    }

    /// Read amplification: data blocks consulted per point read (cached or read from the
    /// file; bloom filters keep most tables from costing one). About 1 means a get touches one
    /// block. 0 before any get.
    pub fn data_blocks_per_get(&self) -> f64 {
        if self.gets == 0 {
            0.0
        } else {
            self.get_data_blocks as f64 / self.gets as f64
        }
    }

    /// Block cache misses (of any block kind, by any reader) per point read: an upper bound
    /// of the disk reads per get when gets dominate the load; 0 before any get.
    pub fn block_reads_per_get(&self) -> f64 {
        if self.gets == 0 {
            0.0
        } else {
            self.block_cache_misses as f64 / self.gets as f64
        }
    }

    /// Fraction of block lookups served from the cache; 0 before any lookup.
    pub fn block_cache_hit_rate(&self) -> f64 {
        let total = self.block_cache_hits + self.block_cache_misses;
        if total == 0 {
            0.0
        } else {
            self.block_cache_hits as f64 / total as f64
        }
    }
}

impl fmt::Display for Statistics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "writes: {} keys, {} user bytes, {} groups",
            self.keys_written, self.user_bytes_written, self.write_groups
        )?;
        writeln!(
            f,
            "wal: {} bytes, {} syncs",
            self.wal_bytes_written, self.wal_syncs
        )?;
        writeln!(
            f,
            "flushes: {} ({} bytes)",
            self.flushes, self.flush_bytes_written
        )?;
        writeln!(
            f,
            "compactions: {} ({} bytes read, {} bytes written), {} files moved down unchanged",
            self.compactions,
            self.compaction_bytes_read,
            self.compaction_bytes_written,
            self.compaction_files_moved
        )?;
        writeln!(
            f,
            "amplification: write {:.2}, space {:.2}, read {:.2} data blocks per get ({:.2} cache misses per get)",
            self.write_amplification(),
            self.space_amplification(),
            self.data_blocks_per_get(),
            self.block_reads_per_get()
        )?;
        writeln!(
            f,
            "compaction: {} running, {} bytes pending, {} tombstones dropped",
            self.running_compactions,
            self.pending_compaction_bytes,
            self.compaction_tombstones_dropped
        )?;
        writeln!(
            f,
            "memtables: {} bytes, {} immutable",
            self.memtable_bytes, self.immutable_memtables
        )?;
        writeln!(
            f,
            "block cache: {} hits, {} misses ({:.1}% hit), {} of {} bytes; data {}/{}, index {}/{}, filter {}/{} (hits/misses)",
            self.block_cache_hits,
            self.block_cache_misses,
            self.block_cache_hit_rate() * 100.0,
            self.block_cache_usage,
            self.block_cache_capacity,
            self.data_block_hits,
            self.data_block_misses,
            self.index_block_hits,
            self.index_block_misses,
            self.filter_block_hits,
            self.filter_block_misses
        )?;
        writeln!(
            f,
            "gets: {}; table files: {} open, {} opens",
            self.gets, self.open_table_files, self.table_opens
        )?;
        writeln!(
            f,
            "write slowdowns: {} ({} us); stops: {} ({} us); longest wait {} us; idle flush wake-ups: {}",
            self.write_slowdowns,
            self.write_slowdown_micros,
            self.write_stops,
            self.write_stop_micros,
            self.longest_write_wait_micros,
            self.flush_idle_wakeups
        )?;
        writeln!(f, "live snapshots: {}", self.live_snapshots)?;
        // Levels down to the deepest one that holds a file (always L0).
        let deepest = self.levels.iter().rposition(|l| l.files > 0).unwrap_or(0);
        for l in self.levels.iter().take(deepest + 1) {
            writeln!(
                f,
                "L{}: {} files, {} bytes, target {} bytes, score {:.2}",
                l.level, l.files, l.bytes, l.target_bytes, l.score
            )?;
        }
        Ok(())
    }
}
