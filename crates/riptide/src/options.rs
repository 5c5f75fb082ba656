//! Options for opening a database, reading and writing.

pub use riptide_sstable::Compression;
pub use riptide_wal::{RecoveryMode, SyncMode};

use std::time::Duration;

use riptide_common::fs::FsRef;
use riptide_common::{Error, Result};

use crate::snapshot::Snapshot;

/// How a database is opened and tuned. Build with [`Options::default`] and the setters.
///
/// Every setter's doc states the default and the nearest RocksDB option. Every option can
/// also be set by name from text ([`Options::set_by_name`]); [`Options::TABLE`] lists them
/// with their types, bounds and defaults.
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) create_if_missing: bool,
    pub(crate) error_if_exists: bool,
    pub(crate) write_buffer_size: usize,
    pub(crate) max_immutable_memtables: usize,
    pub(crate) memtable_bloom_size_ratio: f64,
    pub(crate) sync_mode: SyncMode,
    /// The interval of [`SyncMode::Interval`], kept while another mode is chosen so the
    /// `sync_mode` and `sync_interval_ms` options can be set by name in either order.
    pub(crate) sync_interval: Duration,
    pub(crate) recovery_mode: RecoveryMode,
    pub(crate) wal_preallocate_bytes: u64,
    pub(crate) max_txn_write_set_bytes: u64,
    pub(crate) block_cache_size: u64,
    pub(crate) block_size: usize,
    pub(crate) restart_interval: usize,
    pub(crate) compression: Compression,
    /// The zstd level of [`Compression::Zstd`], kept while compression is off so the
    /// `compression` and `compression_level` options can be set by name in either order.
    pub(crate) zstd_level: i32,
    pub(crate) bloom_bits_per_key: u32,
    pub(crate) bytes_per_sync: u64,
    pub(crate) block_align: bool,
    pub(crate) l0_compaction_trigger: usize,
    pub(crate) young_space_bound: bool,
    pub(crate) target_file_size: u64,
    pub(crate) sort_buffer_size: usize,
    pub(crate) ingest_min_bytes: u64,
    pub(crate) l0_slowdown_trigger: usize,
    pub(crate) l0_stop_trigger: usize,
    pub(crate) soft_pending_compaction_bytes: u64,
    pub(crate) hard_pending_compaction_bytes: u64,
    pub(crate) delayed_write_rate: u64,
    pub(crate) db_write_buffer_size: usize,
    pub(crate) max_total_wal_size: u64,
    pub(crate) max_background_compactions: usize,
    pub(crate) max_background_flushes: usize,
    pub(crate) max_subcompactions: usize,
    pub(crate) num_levels: usize,
    pub(crate) max_bytes_for_level_base: u64,
    pub(crate) level_size_ratio: f64,
    pub(crate) dynamic_level_bytes: bool,
    pub(crate) tombstone_ratio_trigger: f64,
    pub(crate) tombstone_min_entries: u64,
    pub(crate) tombstone_coalesce_min_run: usize,
    pub(crate) memtable_scan_flush_trigger: u64,
    pub(crate) max_compaction_bytes: Option<u64>,
    pub(crate) compaction_pri: riptide_compaction::CompactionPriority,
    pub(crate) max_open_files: usize,
    pub(crate) file_system: FsRef,
}

/// With [`Options::young_space_bound`], the largest share of a column family's table bytes
/// that its memtable, or its L0, may hold before it is flushed, or merged down.
const YOUNG_FRACTION: f64 = 0.25;

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            write_buffer_size: 64 << 20,
            max_immutable_memtables: 2,
            memtable_bloom_size_ratio: 0.02,
            sync_mode: SyncMode::Full,
            sync_interval: Duration::from_secs(1),
            recovery_mode: RecoveryMode::TolerateCorruptedTail,
            wal_preallocate_bytes: riptide_wal::DEFAULT_PREALLOCATE_BYTES,
            max_txn_write_set_bytes: 0,
            block_cache_size: 64 << 20,
            block_size: 4096,
            restart_interval: 16,
            compression: Compression::None,
            zstd_level: 1,
            bloom_bits_per_key: 10,
            bytes_per_sync: riptide_sstable::options::DEFAULT_BYTES_PER_SYNC,
            block_align: false,
            l0_compaction_trigger: 4,
            young_space_bound: true,
            target_file_size: 64 << 20,
            sort_buffer_size: 64 << 20,
            ingest_min_bytes: 1 << 20,
            l0_slowdown_trigger: 20,
            l0_stop_trigger: 36,
            soft_pending_compaction_bytes: 64 << 30,
            hard_pending_compaction_bytes: 256 << 30,
            delayed_write_rate: 16 << 20,
            db_write_buffer_size: 256 << 20,
            max_total_wal_size: 0,
            max_background_compactions: 2,
            max_background_flushes: 1,
            max_subcompactions: 1,
            num_levels: 7,
            max_bytes_for_level_base: 256 << 20,
            level_size_ratio: 10.0,
            dynamic_level_bytes: true,
            tombstone_ratio_trigger: 0.5,
            tombstone_min_entries: 10_000,
            tombstone_coalesce_min_run: 1024,
            memtable_scan_flush_trigger: 20_000,
            max_compaction_bytes: None,
            compaction_pri: riptide_compaction::CompactionPriority::MinOverlappingRatio,
            max_open_files: 512,
            file_system: riptide_common::fs::real(),
        }
    }
}

impl Options {
    /// Create the database if the directory holds none. Default `true`
    /// (RocksDB `create_if_missing`, default false there).
    pub fn create_if_missing(mut self, v: bool) -> Self {
        self.create_if_missing = v;
        self
    }

    /// Fail to open if a database already exists. Default `false` (RocksDB `error_if_exists`).
    pub fn error_if_exists(mut self, v: bool) -> Self {
        self.error_if_exists = v;
        self
    }

    /// Size in bytes at which a column family's active memtable is frozen and queued for
    /// flush. Default 64 MiB (RocksDB `write_buffer_size`). Minimum 4 KiB.
    pub fn write_buffer_size(mut self, bytes: usize) -> Self {
        self.write_buffer_size = bytes.max(4096);
        self
    }

    /// How many frozen memtables per column family may wait for flush before writers stop
    /// until one is flushed. Default 2 (RocksDB `max_write_buffer_number` - 1). Minimum 1.
    pub fn max_immutable_memtables(mut self, n: usize) -> Self {
        self.max_immutable_memtables = n.max(1);
        self
    }

    /// Size of each memtable's key filter as a fraction of `write_buffer_size`, 0 for none.
    /// A point read skips the skiplist search of a memtable whose filter rules the key out
    /// (in a database bigger than its memtables, most reads). Default 0.02: 1.3 MiB for a
    /// 64 MiB memtable, about 25 bits per entry of 150 bytes (RocksDB
    /// `memtable_prefix_bloom_size_ratio` with `memtable_whole_key_filtering`, off by default
    /// there). At most 0.25.
    pub fn memtable_bloom_size_ratio(mut self, ratio: f64) -> Self {
        self.memtable_bloom_size_ratio = clamped_ratio(ratio, 0.25, 0.0);
        self
    }

    /// A fresh memtable tagged `id` (the WAL segment that logs its writes), with the key
    /// filter [`Options::memtable_bloom_size_ratio`] asks for.
    pub(crate) fn new_memtable(&self, id: u64) -> riptide_memtable::Memtable {
        let filter_bytes =
            (self.write_buffer_size as f64 * self.memtable_bloom_size_ratio) as usize;
        riptide_memtable::Memtable::with_key_filter(id, filter_bytes)
    }

    /// When the WAL is fsynced. Default [`SyncMode::Full`]: every acknowledged write is on
    /// disk (RocksDB `WriteOptions::sync = true`). [`SyncMode::None`] survives a process crash
    /// but not a power loss; [`SyncMode::Interval`] bounds the loss window.
    pub fn sync_mode(mut self, mode: SyncMode) -> Self {
        if let SyncMode::Interval(interval) = mode {
            self.sync_interval = interval;
        }
        self.sync_mode = mode;
        self
    }

    /// What WAL damage is tolerated at open. Default
    /// [`RecoveryMode::TolerateCorruptedTail`] (RocksDB `wal_recovery_mode`).
    pub fn recovery_mode(mut self, mode: RecoveryMode) -> Self {
        self.recovery_mode = mode;
        self
    }

    /// When the WAL is synced ([`SyncMode::Full`] or [`SyncMode::Interval`]), its segment
    /// is extended with zeros up to this many bytes at a time ahead of the records, which
    /// overwrite them: a sync then flushes data without committing the file system's
    /// journal for a grown file. 0: records are appended. Default 1 MiB
    /// (`riptide_wal::WalOptions::preallocate_bytes`; RocksDB preallocates its WAL too).
    pub fn wal_preallocate_bytes(mut self, bytes: u64) -> Self {
        self.wal_preallocate_bytes = bytes;
        self
    }

    /// The most a transaction's write set may hold in memory (keys, values, undo and lock
    /// records; [`crate::Transaction::approximate_memory`]). Once it holds more, every
    /// further write of the transaction fails with `ErrorKind::LimitExceeded` and does
    /// nothing (so it passes the limit by at most its last accepted write); the
    /// transaction stays usable: commit it, or roll back to a savepoint to free room. 0: no
    /// limit (the default, as RocksDB's `max_write_batch_size`). A transaction holds its
    /// whole write set in memory until it commits, so without a limit one huge statement
    /// can grow the process by gigabytes.
    pub fn max_txn_write_set_bytes(mut self, bytes: u64) -> Self {
        self.max_txn_write_set_bytes = bytes;
        self
    }

    /// Capacity of the shared block cache in bytes. Default 64 MiB
    /// (RocksDB `BlockBasedTableOptions::block_cache`).
    pub fn block_cache_size(mut self, bytes: u64) -> Self {
        self.block_cache_size = bytes;
        self
    }

    /// Target uncompressed size of a data block. Default 4096 (RocksDB `block_size`).
    pub fn block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes.max(256);
        self
    }

    /// Keys between restart points in a block. Default 16 (RocksDB `block_restart_interval`).
    pub fn restart_interval(mut self, n: usize) -> Self {
        self.restart_interval = n.max(1);
        self
    }

    /// Compression of table blocks. Default none (RocksDB `compression`).
    pub fn compression(mut self, c: Compression) -> Self {
        if let Compression::Zstd { level } = c {
            self.zstd_level = level;
        }
        self.compression = c;
        self
    }

    /// Bloom filter bits per key; 0 disables filters. Default 10, about 1% false positives
    /// (RocksDB `filter_policy = NewBloomFilterPolicy(10)`).
    pub fn bloom_bits_per_key(mut self, bits: u32) -> Self {
        self.bloom_bits_per_key = bits;
        self
    }

    /// While a flush or compaction writes a table, start the device write of every further
    /// this many bytes, so the table does not reach the device in one burst at its final
    /// sync with reads queued behind it; 0: never. Default 1 MiB (RocksDB `bytes_per_sync`).
    pub fn bytes_per_sync(mut self, bytes: u64) -> Self {
        self.bytes_per_sync = bytes;
        self
    }

    /// Start every data block of an uncompressed table at a multiple of `block_size`
    /// (which must be a power of two from 512 to 1 MiB), zero bytes padding the gap, so a
    /// block read from the file is one page of the page cache rather than usually two.
    /// Applies to the tables written while the database is open with it, when they are not
    /// compressed (fixed while open, as `block_size` is; a database holds aligned and
    /// packed tables side by side). Aligned tables are table format version 3: builds
    /// before it cannot open them. Default false (RocksDB `block_align`).
    pub fn block_align(mut self, on: bool) -> Self {
        self.block_align = on;
        self
    }

    /// Number of L0 tables that triggers a merge into L1. Default 4
    /// (RocksDB `level0_file_num_compaction_trigger`). Minimum 2; at most the (effective)
    /// [`Self::l0_stop_trigger`], else `Db::open` fails with `InvalidArgument`.
    pub fn l0_compaction_trigger(mut self, n: usize) -> Self {
        self.l0_compaction_trigger = n.max(2);
        self
    }

    /// Bound space amplification while a column family is small next to its write buffer.
    /// Default on. A flush needs the memtable's WAL and its new table on disk at once, and a
    /// compaction keeps its L0 inputs until it ends; on a 200 MiB database with a 64 MiB
    /// memtable and four L0 files that briefly doubled the disk use. With this on:
    /// * a column family's memtable is flushed once it holds a quarter of the bytes of the
    ///   column family's tables, but never below `write_buffer_size / 8` nor above
    ///   `write_buffer_size` (so from twice `write_buffer_size` of tables on, nothing
    ///   changes);
    /// * L0 is merged down once it holds a quarter of the bytes of the deeper levels (see
    ///   `LevelOptions::l0_fraction_trigger`);
    /// * the first flush into a column family without tables writes small tables straight
    ///   into the base level, where the first compaction can free them one at a time.
    ///
    /// The price is more, smaller flushes and compactions while the database is young. See
    /// `docs/ENGINE.md`, "A young database".
    pub fn young_space_bound(mut self, on: bool) -> Self {
        self.young_space_bound = on;
        self
    }

    /// The memtable size at which a column family holding `table_bytes` of tables is
    /// flushed: `write_buffer_size`, or less while the column family is young (see
    /// [`Self::young_space_bound`]).
    pub(crate) fn memtable_limit(&self, table_bytes: u64) -> usize {
        let full = self.write_buffer_size;
        if !self.young_space_bound {
            return full;
        }
        let share = (table_bytes as f64 * YOUNG_FRACTION) as u64;
        usize::try_from(share)
            .unwrap_or(usize::MAX)
            .clamp((full / 8).max(1), full)
    }

    /// Target size of tables written by compaction. Default 64 MiB
    /// (RocksDB `target_file_size_base`).
    pub fn target_file_size(mut self, bytes: u64) -> Self {
        self.target_file_size = bytes.max(4096);
        self
    }

    /// Memory of each [`crate::sort::ExternalSorter`] that [`crate::Db::external_sorter`]
    /// makes (an index build's sort): past it, sorted runs go to temporary files. Default
    /// 64 MiB; at least 1 MiB.
    pub fn sort_buffer_size(mut self, bytes: usize) -> Self {
        self.sort_buffer_size = bytes.max(crate::sort::MIN_SORT_MEMORY);
        self
    }

    /// The smallest load worth ingesting ([`crate::Db::ingest_writer`]) for a caller that
    /// could write its keys the ordinary way instead (the MariaDB handler's bulk load): each
    /// ingest makes files of its own, often in the last level, and many small ones cost
    /// more in file count and reads than the WAL and memtable they save. The engine does not
    /// enforce it; [`crate::Db::ingest_min_bytes`] reads it. Default 1 MiB; 0 ingests any
    /// load.
    pub fn ingest_min_bytes(mut self, bytes: u64) -> Self {
        self.ingest_min_bytes = bytes;
        self
    }

    /// L0 table count at which writes start slowing down. Default 20
    /// (RocksDB `level0_slowdown_writes_trigger`).
    pub fn l0_slowdown_trigger(mut self, n: usize) -> Self {
        self.l0_slowdown_trigger = n.max(1);
        self
    }

    /// L0 table count at which writes stop until compaction catches up. Default 36
    /// (RocksDB `level0_stop_writes_trigger`). Kept above the slowdown trigger. Must not be
    /// below [`Self::l0_compaction_trigger`] (`Db::open` refuses that: writes would stop
    /// for good, waiting for a compaction that would never start).
    pub fn l0_stop_trigger(mut self, n: usize) -> Self {
        self.l0_stop_trigger = n.max(2);
        self
    }

    /// Bytes waiting for compaction at which writes start slowing down. Default 64 GiB
    /// (RocksDB `soft_pending_compaction_bytes_limit`).
    pub fn soft_pending_compaction_bytes(mut self, bytes: u64) -> Self {
        self.soft_pending_compaction_bytes = bytes;
        self
    }

    /// Bytes waiting for compaction at which writes stop. Default 256 GiB
    /// (RocksDB `hard_pending_compaction_bytes_limit`).
    pub fn hard_pending_compaction_bytes(mut self, bytes: u64) -> Self {
        self.hard_pending_compaction_bytes = bytes;
        self
    }

    /// Write rate (bytes per second) at the first sign of pressure; it falls smoothly to
    /// 1/16 of this as pressure nears a stop. Default 16 MiB/s (RocksDB
    /// `delayed_write_rate`).
    pub fn delayed_write_rate(mut self, bytes_per_sec: u64) -> Self {
        self.delayed_write_rate = bytes_per_sec.max(1024);
        self
    }

    /// Memory budget for all memtables of all column families together: when they reach it
    /// the largest active memtable is flushed, and if frozen memtables alone fill it writers
    /// wait. Default 256 MiB (RocksDB `db_write_buffer_size`, which defaults to unlimited).
    pub fn db_write_buffer_size(mut self, bytes: usize) -> Self {
        self.db_write_buffer_size = bytes.max(4096);
        self
    }

    /// Bound on the WAL kept for unflushed data: once a column family's active memtable
    /// has been holding back more than this many WAL bytes (written since its oldest
    /// unflushed write), it is flushed, so a rarely written column family cannot keep every
    /// segment alive. 0 (the default) means 4x [`Options::db_write_buffer_size`]
    /// (RocksDB `max_total_wal_size`, whose default is 4x the memtable budget as well).
    pub fn max_total_wal_size(mut self, bytes: u64) -> Self {
        self.max_total_wal_size = bytes;
        self
    }

    /// The effective WAL bound (see [`Options::max_total_wal_size`]).
    pub(crate) fn wal_bound(&self) -> u64 {
        match self.max_total_wal_size {
            0 => (self.db_write_buffer_size as u64).saturating_mul(4),
            n => n,
        }
    }

    /// Threads running compactions in parallel on disjoint key ranges (flushes have their own
    /// threads: [`Options::max_background_flushes`]). Default 2 (RocksDB
    /// `max_background_compactions`). Minimum 1.
    pub fn max_background_compactions(mut self, n: usize) -> Self {
        self.max_background_compactions = n.max(1);
        self
    }

    /// Threads flushing frozen memtables. Default 1. Column families flush in parallel, one
    /// thread each at a time; the memtables of one column family are always flushed one
    /// after the other, oldest first (reads rely on that order), so a second thread only
    /// helps a database whose writes spread over several column families. Minimum 1, at most
    /// 64 (RocksDB `max_background_flushes`).
    pub fn max_background_flushes(mut self, n: usize) -> Self {
        self.max_background_flushes = n.clamp(1, 64);
        self
    }

    /// Threads one big compaction may be split into. Default 1 (RocksDB
    /// `max_subcompactions`). Minimum 1.
    pub fn max_subcompactions(mut self, n: usize) -> Self {
        self.max_subcompactions = n.max(1);
        self
    }

    /// Number of levels, L0 included. Default 7 (RocksDB `num_levels`). At least 2.
    pub fn num_levels(mut self, n: usize) -> Self {
        self.num_levels = n.clamp(2, 64);
        self
    }

    /// Target size of the base level (the level L0 compacts into). Default 256 MiB
    /// (RocksDB `max_bytes_for_level_base`).
    pub fn max_bytes_for_level_base(mut self, bytes: u64) -> Self {
        self.max_bytes_for_level_base = bytes.max(4096);
        self
    }

    /// Size ratio between adjacent levels. Default 10 (RocksDB
    /// `max_bytes_for_level_multiplier`). At least 2.
    pub fn level_size_ratio(mut self, ratio: f64) -> Self {
        self.level_size_ratio = if ratio.is_finite() {
            ratio.max(2.0)
        } else {
            10.0
        };
        self
    }

    /// Size levels from the last level up, so space amplification stays near
    /// 1 + 1/ratio whatever the data size. Default true (RocksDB
    /// `level_compaction_dynamic_level_bytes`).
    pub fn dynamic_level_bytes(mut self, on: bool) -> Self {
        self.dynamic_level_bytes = on;
        self
    }

    /// A table whose tombstones make up at least this fraction of its entries (and that has
    /// at least [`Options::tombstone_min_entries`] entries) is compacted even when no level
    /// is over its target, so deletes do not slow scans down. Default 0.5; 0 disables.
    /// (RocksDB offers this as `CompactOnDeletionCollector`.)
    pub fn tombstone_ratio_trigger(mut self, ratio: f64) -> Self {
        self.tombstone_ratio_trigger = clamped_ratio(ratio, 1.0, 0.5);
        self
    }

    /// Minimum entries for the tombstone-density trigger. Default 10,000.
    pub fn tombstone_min_entries(mut self, n: u64) -> Self {
        self.tombstone_min_entries = n;
        self
    }

    /// At flush, a run of at least this many consecutive deleted keys becomes one range
    /// tombstone as well (once checked against the older data: it must delete nothing that
    /// was live), so scans seek over the stretch instead of stepping over each tombstone: the
    /// consumed end of a queue table stays cheap to scan. 0 disables it. Default 1024. (No
    /// RocksDB equivalent; RocksDB users call `DeleteRange` themselves.)
    pub fn tombstone_coalesce_min_run(mut self, n: usize) -> Self {
        self.tombstone_coalesce_min_run = n;
        self
    }

    /// When one iterator positioning (a seek or a step) passes over at least this many hidden
    /// entries (tombstones and the versions they delete) and the active memtable holds at
    /// least half as many deletes, that memtable is frozen and flushed early (once it holds
    /// an eighth of `write_buffer_size`), so its runs of tombstones become range tombstones
    /// scans can seek over (see [`Options::tombstone_coalesce_min_run`]). 0 disables it.
    /// Default 20,000 (RocksDB `memtable_op_scan_flush_trigger`, off by default there).
    pub fn memtable_scan_flush_trigger(mut self, entries: u64) -> Self {
        self.memtable_scan_flush_trigger = entries;
        self
    }

    /// Upper bound on the input bytes of one compaction (outside L0). Smaller jobs hold less
    /// transient disk space (a job's outputs exist beside its inputs until it installs).
    /// Default 25 x `target_file_size` (RocksDB `max_compaction_bytes`).
    pub fn max_compaction_bytes(mut self, bytes: u64) -> Self {
        self.max_compaction_bytes = Some(bytes.max(4096));
        self
    }

    /// Which file of a level a size-triggered compaction starts from. Default
    /// [`MinOverlappingRatio`](riptide_compaction::CompactionPriority::MinOverlappingRatio):
    /// the file that rewrites the fewest bytes of the level below per byte it moves down
    /// (RocksDB `compaction_pri`, whose default is the same).
    pub fn compaction_pri(mut self, priority: riptide_compaction::CompactionPriority) -> Self {
        self.compaction_pri = priority;
        self
    }

    /// Most table files kept open at once; others are reopened on demand (their index and
    /// filter blocks stay in the block cache). Default 512, below the usual 1024-descriptor
    /// limit (RocksDB `max_open_files`, default unlimited there). Minimum 2.
    pub fn max_open_files(mut self, n: usize) -> Self {
        self.max_open_files = n.max(2);
        self
    }

    /// The file system every file of the database is read and written through: the WAL,
    /// tables, the manifest, the directory lock. Default: the operating system's
    /// ([`RealFs`](crate::fs::RealFs), over `std::fs`). Tests pass a fault-injecting one
    /// (`riptide_common::fs::FaultFs`, cargo feature `fault-injection`). RocksDB `Env` /
    /// `FileSystem` in `DBOptions::env`.
    pub fn file_system(mut self, fs: FsRef) -> Self {
        self.file_system = fs;
        self
    }

    pub(crate) fn level_options(&self) -> riptide_compaction::LevelOptions {
        let defaults = riptide_compaction::LevelOptions::default();
        riptide_compaction::LevelOptions {
            max_compaction_bytes: self
                .max_compaction_bytes
                .unwrap_or(self.target_file_size.saturating_mul(25)),
            num_levels: self.num_levels,
            l0_compaction_trigger: self.l0_compaction_trigger,
            l0_fraction_trigger: if self.young_space_bound {
                YOUNG_FRACTION
            } else {
                0.0
            },
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            level_size_ratio: self.level_size_ratio,
            dynamic_level_bytes: self.dynamic_level_bytes,
            target_file_size_base: self.target_file_size,
            tombstone_ratio_trigger: self.tombstone_ratio_trigger,
            tombstone_min_entries: self.tombstone_min_entries,
            priority: self.compaction_pri,
            ..defaults
        }
    }

    /// Refuses option combinations the engine cannot run with. Called by `Db::open` before
    /// it touches the disk.
    pub(crate) fn validate(&self) -> Result<()> {
        let stop = self.thresholds().l0_stop;
        if self.l0_compaction_trigger > stop {
            return Err(Error::invalid_argument(format!(
                "l0_compaction_trigger ({}) is above l0_stop_trigger ({stop}{}): writes would \
                 stop at {stop} L0 tables and wait for good for a compaction that starts at {}; \
                 lower l0_compaction_trigger or raise l0_stop_trigger",
                self.l0_compaction_trigger,
                if stop == self.l0_stop_trigger {
                    String::new()
                } else {
                    format!(
                        ", raised from {} to stay above l0_slowdown_trigger {}",
                        self.l0_stop_trigger, self.l0_slowdown_trigger
                    )
                },
                self.l0_compaction_trigger
            )));
        }
        // The table options are checked here, where a bad value is refused, rather than
        // when a flush first writes a table with them.
        self.table_options().validate()
    }

    pub(crate) fn thresholds(&self) -> crate::write_controller::Thresholds {
        crate::write_controller::Thresholds {
            l0_slowdown: self.l0_slowdown_trigger,
            l0_stop: self.l0_stop_trigger.max(self.l0_slowdown_trigger + 1),
            pending_soft: self.soft_pending_compaction_bytes,
            pending_hard: self
                .hard_pending_compaction_bytes
                .max(self.soft_pending_compaction_bytes),
            max_immutable_memtables: self.max_immutable_memtables,
            delayed_write_rate: self.delayed_write_rate,
        }
    }

    pub(crate) fn table_options(&self) -> riptide_sstable::TableOptions {
        riptide_sstable::TableOptions {
            block_size: self.block_size,
            restart_interval: self.restart_interval,
            compression: self.compression,
            bloom_bits_per_key: self.bloom_bits_per_key,
            bytes_per_sync: self.bytes_per_sync,
            block_align: self.block_align,
        }
    }

    pub(crate) fn wal_options(&self) -> riptide_wal::WalOptions {
        riptide_wal::WalOptions {
            sync_mode: self.sync_mode,
            recovery_mode: self.recovery_mode,
            preallocate_bytes: self.wal_preallocate_bytes,
        }
    }
}

/// Options for one read or iterator.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions<'a> {
    pub(crate) snapshot: Option<&'a Snapshot>,
    pub(crate) lower_bound: Option<Vec<u8>>,
    pub(crate) upper_bound: Option<Vec<u8>>,
}

impl<'a> ReadOptions<'a> {
    /// Read as of `snapshot` instead of the latest committed state.
    pub fn snapshot(mut self, snapshot: &'a Snapshot) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// Iterators never return keys below this one (inclusive bound).
    pub fn lower_bound(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.lower_bound = Some(key.into());
        self
    }

    /// Iterators never return this key or any above it (exclusive bound).
    pub fn upper_bound(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.upper_bound = Some(key.into());
        self
    }
}

/// `ratio` within `0.0..=max`, or `fallback` when it is not a number (NaN, infinite): what
/// the ratio setters store.
fn clamped_ratio(ratio: f64, max: f64, fallback: f64) -> f64 {
    if ratio.is_finite() {
        ratio.clamp(0.0, max)
    } else {
        fallback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_setters_clamp_and_replace_what_is_not_a_number() {
        let o = Options::default()
            .memtable_bloom_size_ratio(0.5)
            .tombstone_ratio_trigger(-1.0);
        assert_eq!(o.memtable_bloom_size_ratio, 0.25);
        assert_eq!(o.tombstone_ratio_trigger, 0.0);
        let o = Options::default()
            .memtable_bloom_size_ratio(f64::NAN)
            .tombstone_ratio_trigger(f64::INFINITY);
        assert_eq!(o.memtable_bloom_size_ratio, 0.0);
        assert_eq!(o.tombstone_ratio_trigger, 0.5);
        assert_eq!(clamped_ratio(0.1, 0.25, 0.0), 0.1);
    }
}
