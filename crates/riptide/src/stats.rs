//! Engine statistics: counters kept with relaxed atomics and a public snapshot of them,
//! [`Statistics`]. Every statistic is declared once, in the `statistics!` invocation below:
//! that makes both its field (or the expression that derives it) and its entry of
//! [`Statistics::TABLE`] (name, doc, kind), from which the C ABI and the MariaDB plugin's
//! status variables are made. A new statistic is one entry there.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use riptide_txn::LockManagerStats;

/// Live counters, updated on the hot paths.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) keys_written: AtomicU64,
    pub(crate) user_bytes_written: AtomicU64,
    pub(crate) write_groups: AtomicU64,
    pub(crate) gets: AtomicU64,
    pub(crate) get_data_blocks: AtomicU64,
    pub(crate) bloom_filter_checks: AtomicU64,
    pub(crate) bloom_filter_useful: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) flush_bytes_written: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) compaction_bytes_read: AtomicU64,
    pub(crate) compaction_bytes_written: AtomicU64,
    pub(crate) compaction_tombstones_dropped: AtomicU64,
    pub(crate) compaction_range_deleted: AtomicU64,
    pub(crate) compaction_files_moved: AtomicU64,
    pub(crate) compaction_files_kept: AtomicU64,
    pub(crate) range_files_deleted: AtomicU64,
    pub(crate) range_file_bytes_deleted: AtomicU64,
    pub(crate) ingested_files: AtomicU64,
    pub(crate) ingested_bytes: AtomicU64,
    pub(crate) write_slowdowns: AtomicU64,
    pub(crate) write_slowdown_micros: AtomicU64,
    pub(crate) write_stops: AtomicU64,
    pub(crate) write_stop_micros: AtomicU64,
    pub(crate) longest_write_wait_micros: AtomicU64,
    pub(crate) flush_idle_wakeups: AtomicU64,
    pub(crate) txn_write_set_limit_hits: AtomicU64,
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

/// What a statistic of [`Statistics::TABLE`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatKind {
    /// A count since the database was opened; only grows.
    Counter,
    /// A value now (bytes held, things open or running); goes up and down.
    Gauge,
    /// A ratio derived from other statistics (a [`StatValue::Ratio`]).
    Ratio,
}

/// The value of one statistic: an integer for counters and gauges, a float for ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatValue {
    /// Of a [`StatKind::Counter`] or [`StatKind::Gauge`].
    Integer(u64),
    /// Of a [`StatKind::Ratio`].
    Ratio(f64),
}

/// One statistic of [`Statistics::TABLE`]: its name, one doc line, its kind, and how its
/// value is read from a [`Statistics`] snapshot.
#[derive(Clone, Copy)]
pub struct StatSpec {
    /// The statistic's name (`keys_written`); the MariaDB plugin shows it as the status
    /// variable `Riptide_<name>`.
    pub name: &'static str,
    /// What it measures, in one line.
    pub doc: &'static str,
    /// Counter, gauge or ratio.
    pub kind: StatKind,
    value: fn(&Statistics) -> StatValue,
}

impl StatSpec {
    /// The statistic's value in `stats`.
    pub fn value(&self, stats: &Statistics) -> StatValue {
        (self.value)(stats)
    }
}

impl fmt::Debug for StatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatSpec")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// [`StatKind`] of a kind word of [`statistics!`].
macro_rules! stat_kind {
    (counter) => {
        StatKind::Counter
    };
    (gauge) => {
        StatKind::Gauge
    };
    (ratio) => {
        StatKind::Ratio
    };
}

/// [`StatValue`] of an expression, by the kind word of [`statistics!`].
macro_rules! stat_value {
    (counter, $v:expr) => {
        StatValue::Integer($v)
    };
    (gauge, $v:expr) => {
        StatValue::Integer($v)
    };
    (ratio, $v:expr) => {
        StatValue::Ratio($v)
    };
}

/// The name of a stored statistic: its field's, or the one given after `as`.
macro_rules! stat_name {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident $name:literal) => {
        $name
    };
}

/// Declares every statistic once. `stored` entries are `u64` fields of [`Statistics`]
/// (`kind field` or `kind field as "name"`); `derived` ones are computed from a snapshot
/// (`kind name = |s| expression`); `other` fields are parts of the snapshot that are not
/// statistics themselves. Each entry's doc comment is both the field's rustdoc and the
/// table's doc line. The table lists stored entries, then derived ones, in declaration
/// order.
macro_rules! statistics {
    (
        stored {
            $( $(#[doc = $doc:literal])+ $kind:ident $field:ident $(as $name:literal)?, )*
        }
        other {
            $( $(#[doc = $odoc:literal])+ $ofield:ident: $oty:ty, )*
        }
        derived {
            $( $(#[doc = $ddoc:literal])+ $dkind:ident $dname:ident = $get:expr, )*
        }
    ) => {
        /// A point-in-time copy of the engine's statistics. Print it for a text report;
        /// [`Statistics::TABLE`] lists every statistic with its name, doc and kind.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Statistics {
            $( $(#[doc = $doc])+ pub $field: u64, )*
            $( $(#[doc = $odoc])+ pub $ofield: $oty, )*
        }

        impl Statistics {
            /// Every statistic, declared once: the C ABI (`riptide_stat_at`,
            /// `riptide_stats_fill`) and the MariaDB plugin's status variables are made
            /// from this table.
            pub const TABLE: &'static [StatSpec] = &[
                $(
                    StatSpec {
                        name: stat_name!($field $($name)?),
                        doc: concat!($($doc),+).trim_ascii_start(),
                        kind: stat_kind!($kind),
                        value: |s| stat_value!($kind, s.$field),
                    },
                )*
                $(
                    StatSpec {
                        name: stringify!($dname),
                        doc: concat!($($ddoc),+).trim_ascii_start(),
                        kind: stat_kind!($dkind),
                        value: |s| stat_value!($dkind, ($get)(s)),
                    },
                )*
            ];
        }
    };
}

statistics! {
    stored {
        /// Keys written by the user (each put, delete, single delete counts one).
        counter keys_written,
        /// Bytes of user keys and values written.
        counter user_bytes_written as "bytes_written",
        /// Write groups committed (one WAL record each); `keys_written / write_groups`
        /// shows how well group commit batches concurrent writers.
        counter write_groups,
        /// Bytes appended to the WAL.
        counter wal_bytes_written,
        /// WAL fsyncs.
        counter wal_syncs,
        /// Point reads served.
        counter gets,
        /// Data blocks those point reads consulted (from the cache or the disk); divided by
        /// `gets` this is the read amplification (`data_blocks_per_get`).
        counter get_data_blocks,
        /// Tables' bloom filters consulted by point reads (one per table a read looked in);
        /// RocksDB's `rocksdb.bloom.filter.useful` plus `rocksdb.bloom.filter.full.positive`.
        counter bloom_filter_checks,
        /// Of those, filters that ruled the key out, so the table was not searched
        /// (RocksDB's `rocksdb.bloom.filter.useful`).
        counter bloom_filter_useful,
        /// Memtables flushed to L0 tables.
        counter flushes,
        /// Bytes of tables written by flushes.
        counter flush_bytes_written,
        /// Compactions finished.
        counter compactions,
        /// Bytes of tables read by compactions.
        counter compaction_bytes_read,
        /// Bytes of tables written by compactions.
        counter compaction_bytes_written,
        /// Tombstones compactions removed for good.
        counter compaction_tombstones_dropped,
        /// Versions compactions dropped because a range delete covered them.
        counter compaction_range_deleted,
        /// Table files moved down a level unchanged (trivial moves: no merge, no bytes
        /// written; counted in neither `compactions` nor the compaction bytes).
        counter compaction_files_moved,
        /// Table files a merge left where they were because none of the shallower keys
        /// fell into them (not read, not rewritten; see
        /// `riptide_compaction::CompactionJob::set_aside_untouched`).
        counter compaction_files_kept,
        /// Table files removed whole because a range delete covered every version in them
        /// (`Db::delete_files_in_range`: the MariaDB plugin calls it when a table is
        /// dropped, also by the copy of an `ALTER TABLE`); not read, not rewritten.
        counter range_files_deleted,
        /// Bytes of those files.
        counter range_file_bytes_deleted,
        /// Table files added by ingests (`Db::ingest_writer`: index builds, bulk loads),
        /// without the WAL or the memtable.
        counter ingested_files,
        /// Bytes of those files.
        counter ingested_bytes,
        /// Estimated bytes compaction must still rewrite (drives write back-pressure).
        gauge pending_compaction_bytes,
        /// Compactions running now.
        gauge running_compactions,
        /// Bytes held by memtables (active and frozen), all column families.
        gauge memtable_bytes,
        /// Frozen memtables waiting for flush, all column families.
        gauge immutable_memtables,
        /// Block cache hits.
        counter block_cache_hits,
        /// Block cache misses.
        counter block_cache_misses,
        /// Table files open now (held by the table cache or by readers using them).
        gauge open_table_files,
        /// Table files opened (again) because the table cache did not hold them.
        counter table_opens,
        /// Bytes held by the block cache.
        gauge block_cache_usage,
        /// The block cache's capacity.
        gauge block_cache_capacity,
        /// Data block lookups served from the cache.
        counter data_block_hits,
        /// Data block lookups read from a table file.
        counter data_block_misses,
        /// Index block lookups served from the cache.
        counter index_block_hits,
        /// Index block lookups read from a table file.
        counter index_block_misses,
        /// Bloom filter lookups served from the cache.
        counter filter_block_hits,
        /// Bloom filter lookups read from a table file.
        counter filter_block_misses,
        /// Write groups slowed down by back-pressure (see `Options::l0_slowdown_trigger`).
        counter write_slowdowns,
        /// Total microseconds of those slowdowns.
        counter write_slowdown_micros,
        /// Times writes stopped until background work caught up (a last resort).
        counter write_stops,
        /// Total microseconds writes were stopped.
        counter write_stop_micros,
        /// The longest single slowdown or stop, in microseconds.
        counter longest_write_wait_micros,
        /// Times the flush thread woke up and found no frozen memtable to flush. A few per
        /// write stop or flush request are normal; one per write stop and 100 ms is the most
        /// a stop should cause (more would be a busy loop between writers and the flush
        /// thread).
        counter flush_idle_wakeups,
        /// Transaction writes refused because they would take the transaction's write set
        /// past `max_txn_write_set_bytes` (each failed with `LimitExceeded`).
        counter txn_write_set_limit_hits,
        /// Live snapshots.
        gauge live_snapshots,
    }
    other {
        /// Files and bytes per level, summed over column families.
        levels: Vec<LevelStats>,
        /// The row lock manager's counters (pessimistic transactions, unique checks, gap
        /// locks).
        locks: LockManagerStats,
    }
    derived {
        /// Row-lock requests granted, re-entrant ones included.
        counter lock_granted = |s: &Statistics| s.locks.granted,
        /// Row-lock requests that had to wait (inserts that waited for a gap lock included).
        counter lock_waits = |s: &Statistics| s.locks.waits,
        /// Total microseconds spent waiting for row locks, whatever the outcome.
        counter lock_wait_micros =
            |s: &Statistics| u64::try_from(s.locks.wait_time.as_micros()).unwrap_or(u64::MAX),
        /// Row-lock requests that timed out (zero-timeout failures included).
        counter lock_timeouts = |s: &Statistics| s.locks.timeouts,
        /// Row-lock requests that failed as deadlock victims.
        counter lock_deadlocks = |s: &Statistics| s.locks.deadlocks,
        /// Row-lock waits ended by an interrupt (a killed statement, a shutdown).
        counter lock_interrupts = |s: &Statistics| s.locks.interrupts,
        /// Keys currently locked by at least one transaction.
        gauge locked_keys = |s: &Statistics| s.locks.locked_keys,
        /// Gap locks currently held (or reserved by open locking scans).
        gauge gap_locks = |s: &Statistics| s.locks.gap_locks,
        /// Inserts that waited for another transaction's gap lock (also in `lock_waits`).
        counter insert_waits = |s: &Statistics| s.locks.insert_waits,
        /// Row-lock requests and inserts waiting now (InnoDB's Innodb_row_lock_current_waits).
        gauge lock_waiting = |s: &Statistics| s.locks.waiting,
        /// Tables in L0 now, all column families: a read may have to look in each, and
        /// writes slow down at `l0_slowdown_trigger` and stop at `l0_stop_trigger` of them
        /// (RocksDB `rocksdb.num-files-at-level0`).
        gauge l0_files = |s: &Statistics| s.levels.first().map_or(0, |l| l.files as u64),
        /// Bytes written to disk (WAL and tables) per byte of user data; 0 before any
        /// write.
        ratio write_amplification = Statistics::write_amplification,
        /// Total table bytes per byte in the last level; 0 with no tables.
        ratio space_amplification = Statistics::space_amplification,
        /// Data blocks consulted per point read (read amplification); 0 before any get.
        ratio data_blocks_per_get = Statistics::data_blocks_per_get,
        /// Block cache misses per point read; 0 before any get.
        ratio block_reads_per_get = Statistics::block_reads_per_get,
        /// Fraction of block lookups served from the cache; 0 before any lookup.
        ratio block_cache_hit_rate = Statistics::block_cache_hit_rate,
    }
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
            "compactions: {} ({} bytes read, {} bytes written), {} files moved down unchanged, \
             {} files left in place",
            self.compactions,
            self.compaction_bytes_read,
            self.compaction_bytes_written,
            self.compaction_files_moved,
            self.compaction_files_kept
        )?;
        writeln!(
            f,
            "files deleted whole under range deletes: {} ({} bytes)",
            self.range_files_deleted, self.range_file_bytes_deleted
        )?;
        writeln!(
            f,
            "files ingested: {} ({} bytes)",
            self.ingested_files, self.ingested_bytes
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
        writeln!(
            f,
            "live snapshots: {}; writes refused by max_txn_write_set_bytes: {}",
            self.live_snapshots, self.txn_write_set_limit_hits
        )?;
        // Levels down to the deepest one that holds a file (always L0).
        let deepest = self.levels.iter().rposition(|l| l.files > 0).unwrap_or(0);
        for l in self.levels.iter().take(deepest + 1) {
            writeln!(
                f,
                "L{}: {} files, {} bytes, target {} bytes, score {:.2}",
                l.level, l.files, l.bytes, l.target_bytes, l.score
            )?;
        }
        let l = &self.locks;
        writeln!(
            f,
            "row locks: {} granted, {} waits ({} us), {} timeouts, {} deadlocks, {} keys locked, \
             {} gap locks, {} inserts waited for a gap",
            l.granted,
            l.waits,
            l.wait_time.as_micros(),
            l.timeouts,
            l.deadlocks,
            l.locked_keys,
            l.gap_locks,
            l.insert_waits
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn names_are_unique_identifiers_and_docs_one_line() {
        let mut names: Vec<&str> = Statistics::TABLE.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate statistic names");
        for s in Statistics::TABLE {
            assert!(
                s.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                s.name
            );
            assert!(
                !s.doc.is_empty() && !s.doc.starts_with(' ') && !s.doc.contains('\n'),
                "{}: {:?}",
                s.name,
                s.doc
            );
        }
    }

    fn value(s: &Statistics, name: &str) -> StatValue {
        let spec = Statistics::TABLE.iter().find(|t| t.name == name);
        spec.unwrap_or_else(|| panic!("no statistic {name}"))
            .value(s)
    }

    #[test]
    fn l0_files_counts_the_tables_of_level_0_only() {
        let mut s = Statistics::default();
        assert_eq!(
            value(&s, "l0_files"),
            StatValue::Integer(0),
            "no levels yet"
        );
        s.levels = vec![
            LevelStats {
                level: 0,
                files: 3,
                ..Default::default()
            },
            LevelStats {
                level: 1,
                files: 7,
                ..Default::default()
            },
        ];
        assert_eq!(value(&s, "l0_files"), StatValue::Integer(3));
    }

    #[test]
    fn the_table_reads_fields_derived_values_and_lock_counters() {
        let s = Statistics {
            keys_written: 7,
            user_bytes_written: 100,
            wal_bytes_written: 150,
            flush_bytes_written: 50,
            block_cache_hits: 3,
            block_cache_misses: 1,
            locks: LockManagerStats {
                granted: 11,
                wait_time: Duration::from_millis(3),
                gap_locks: 2,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(value(&s, "keys_written"), StatValue::Integer(7));
        assert_eq!(value(&s, "bytes_written"), StatValue::Integer(100));
        assert_eq!(value(&s, "lock_granted"), StatValue::Integer(11));
        assert_eq!(value(&s, "lock_wait_micros"), StatValue::Integer(3000));
        assert_eq!(value(&s, "gap_locks"), StatValue::Integer(2));
        assert_eq!(value(&s, "write_amplification"), StatValue::Ratio(2.0));
        assert_eq!(value(&s, "block_cache_hit_rate"), StatValue::Ratio(0.75));
        for spec in Statistics::TABLE {
            let v = spec.value(&s);
            match spec.kind {
                StatKind::Ratio => assert!(matches!(v, StatValue::Ratio(_)), "{}", spec.name),
                _ => assert!(matches!(v, StatValue::Integer(_)), "{}", spec.name),
            }
        }
    }
}
