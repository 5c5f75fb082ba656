//! Statistics: the table of `riptide::Statistics::TABLE` (name, doc, kind per statistic),
//! every value filled in one call, and the text report. Nothing here is declared per
//! statistic.

use std::ffi::{CString, c_char};
use std::sync::LazyLock;

use riptide::{Error, LockManagerStats, StatKind, StatValue, Statistics};

use crate::db::riptide_db_t;
use crate::ffi_util::{Out, arg_ref, guard, guard_value, null_arg};
use crate::memory::malloc_string;
use crate::status::riptide_status_t;

/// Statistic kind: a count since the database was opened (only grows).
pub const RIPTIDE_STAT_COUNTER: i32 = 0;
/// Statistic kind: a value now (bytes held, things open or running).
pub const RIPTIDE_STAT_GAUGE: i32 = 1;
/// Statistic kind: a ratio derived from other statistics (read `ratio` of its value).
pub const RIPTIDE_STAT_RATIO: i32 = 2;

/// One statistic of the table (`riptide_stat_at`). Owned by the library, valid and unchanged
/// for the life of the process. Fields are only ever added at the end.
#[repr(C)]
pub struct riptide_stat_t {
    /// The name, NUL-terminated (`keys_written`; MariaDB shows `Riptide_<name>`).
    pub name: *const c_char,
    /// What it measures, in one line.
    pub doc: *const c_char,
    /// `RIPTIDE_STAT_COUNTER`, `RIPTIDE_STAT_GAUGE` or `RIPTIDE_STAT_RATIO`.
    pub kind: i32,
}

/// The value of one statistic, as `riptide_stats_fill` stores it: `integer` for a counter
/// or gauge, `ratio` for a ratio.
#[repr(C)]
#[derive(Clone, Copy)]
pub union riptide_stat_value_t {
    /// The value of a `RIPTIDE_STAT_COUNTER` or `RIPTIDE_STAT_GAUGE`.
    pub integer: u64,
    /// The value of a `RIPTIDE_STAT_RATIO`.
    pub ratio: f64,
}

/// `Statistics::TABLE` in C form, with the strings its entries point into.
struct StatTable {
    entries: Vec<riptide_stat_t>,
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers of a `StatTable` point into its own `CString`s, whose heap buffers
// never move or change after the table is built (it is never mutated), so sharing it between
// threads shares only immutable data.
unsafe impl Sync for StatTable {}
// SAFETY: as for `Sync`: the table owns everything its pointers point into.
unsafe impl Send for StatTable {}

static STATS: LazyLock<StatTable> = LazyLock::new(|| {
    let mut strings = Vec::new();
    let mut keep = |s: &str| {
        // Names and docs hold no NUL byte (the riptide crate's tests check the names).
        let c = CString::new(s).unwrap_or_default();
        let p = c.as_ptr();
        strings.push(c);
        p
    };
    let entries = Statistics::TABLE
        .iter()
        .map(|s| riptide_stat_t {
            name: keep(s.name),
            doc: keep(s.doc),
            kind: match s.kind {
                StatKind::Counter => RIPTIDE_STAT_COUNTER,
                StatKind::Gauge => RIPTIDE_STAT_GAUGE,
                StatKind::Ratio => RIPTIDE_STAT_RATIO,
            },
        })
        .collect();
    StatTable {
        entries,
        _strings: strings,
    }
});

/// How many statistics there are (`riptide_stat_at`, `riptide_stats_fill`).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_stat_count() -> usize {
    guard_value(0, || STATS.entries.len())
}

/// The statistic number `index` (0 .. `riptide_stat_count()` - 1), NULL past the end.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_stat_at(index: usize) -> *const riptide_stat_t {
    guard_value(std::ptr::null(), || {
        STATS
            .entries
            .get(index)
            .map_or(std::ptr::null(), std::ptr::from_ref)
    })
}

/// Fills `values[i]` with the value of statistic `i` (`riptide_stat_at(i)`), for `i` below
/// `count`, all from one snapshot of the engine. Pass `count = riptide_stat_count()`; a
/// smaller count gets the first statistics only, entries past the table get 0.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `values` is NULL or points to `count` writable
/// values; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_stats_fill(
    db: *mut riptide_db_t,
    values: *mut riptide_stat_value_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe {
        guard(errmsg, || {
            if values.is_null() {
                return Err(null_arg("values"));
            }
            if count > isize::MAX as usize / std::mem::size_of::<riptide_stat_value_t>() {
                return Err(Error::invalid_argument(format!(
                    "count {count} of parameter `values` is too large"
                )));
            }
            // SAFETY: `db` is NULL or a live handle, per this function's contract.
            let stats = arg_ref(db, "db")?.with(|db| Ok(db.statistics()))?;
            // SAFETY: `values` is non-NULL (checked above) and points to `count` writable
            // values not otherwise accessed during the call, per this function's contract;
            // `riptide_stat_value_t` is plain data and `count` values fit in `isize`.
            let out = std::slice::from_raw_parts_mut(values, count);
            let mut specs = Statistics::TABLE.iter();
            for slot in out {
                *slot = match specs.next().map(|s| s.value(&stats)) {
                    Some(StatValue::Ratio(ratio)) => riptide_stat_value_t { ratio },
                    Some(StatValue::Integer(integer)) => riptide_stat_value_t { integer },
                    None => riptide_stat_value_t { integer: 0 },
                };
            }
            Ok(())
        })
    }
}

/// A point-in-time copy of the engine's statistics, filled by `riptide_stats`. Fields are
/// only ever added at the end, so a caller built against an older header keeps working (it
/// passes its own `sizeof(riptide_stats_t)`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct riptide_stats_t {
    /// Keys written by the user (each put, delete, single delete counts one).
    pub keys_written: u64,
    /// Bytes of user keys and values written.
    pub user_bytes_written: u64,
    /// Write groups committed (one WAL record each).
    pub write_groups: u64,
    /// Bytes appended to the WAL.
    pub wal_bytes_written: u64,
    /// WAL fsyncs.
    pub wal_syncs: u64,
    /// Point reads served.
    pub gets: u64,
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
    /// Estimated bytes compaction must still rewrite.
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
    /// Table files open now.
    pub open_table_files: u64,
    /// Table files opened because the table cache did not hold them.
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
    /// Write groups slowed down by back-pressure.
    pub write_slowdowns: u64,
    /// Total microseconds of those slowdowns.
    pub write_slowdown_micros: u64,
    /// Times writes stopped until background work caught up.
    pub write_stops: u64,
    /// Total microseconds writes were stopped.
    pub write_stop_micros: u64,
    /// The longest single slowdown or stop, in microseconds.
    pub longest_write_wait_micros: u64,
    /// Live snapshots.
    pub live_snapshots: u64,
    /// Row-lock requests granted.
    pub lock_granted: u64,
    /// Row-lock requests that had to wait.
    pub lock_waits: u64,
    /// Total microseconds spent waiting for row locks.
    pub lock_wait_micros: u64,
    /// Row-lock requests that failed with `RIPTIDE_TIMED_OUT`.
    pub lock_timeouts: u64,
    /// Row-lock requests that failed with `RIPTIDE_DEADLOCK`.
    pub lock_deadlocks: u64,
    /// Keys currently locked by at least one transaction.
    pub locked_keys: u64,
    /// Gap locks currently held (or reserved by open locking scans).
    pub gap_locks: u64,
    /// Inserts that waited for another transaction's gap lock (also counted in
    /// `lock_waits`).
    pub insert_waits: u64,
    /// Bytes written to disk (WAL and tables) per byte of user data; 0 before any write.
    pub write_amplification: f64,
    /// Total table bytes per byte in the last level; 0 with no tables.
    pub space_amplification: f64,
    /// Blocks read from table files per point read.
    pub block_reads_per_get: f64,
    /// Fraction of block lookups served from the cache; 0 before any lookup.
    pub block_cache_hit_rate: f64,
    /// Table files moved down a level unchanged (trivial moves).
    pub compaction_files_moved: u64,
}

impl riptide_stats_t {
    /// The C form of the engine's statistics and lock statistics.
    fn new(s: &Statistics, l: &LockManagerStats) -> riptide_stats_t {
        riptide_stats_t {
            keys_written: s.keys_written,
            user_bytes_written: s.user_bytes_written,
            write_groups: s.write_groups,
            wal_bytes_written: s.wal_bytes_written,
            wal_syncs: s.wal_syncs,
            gets: s.gets,
            flushes: s.flushes,
            flush_bytes_written: s.flush_bytes_written,
            compactions: s.compactions,
            compaction_bytes_read: s.compaction_bytes_read,
            compaction_bytes_written: s.compaction_bytes_written,
            compaction_tombstones_dropped: s.compaction_tombstones_dropped,
            compaction_range_deleted: s.compaction_range_deleted,
            pending_compaction_bytes: s.pending_compaction_bytes,
            running_compactions: s.running_compactions,
            memtable_bytes: s.memtable_bytes,
            immutable_memtables: s.immutable_memtables,
            block_cache_hits: s.block_cache_hits,
            block_cache_misses: s.block_cache_misses,
            open_table_files: s.open_table_files,
            table_opens: s.table_opens,
            block_cache_usage: s.block_cache_usage,
            block_cache_capacity: s.block_cache_capacity,
            data_block_hits: s.data_block_hits,
            data_block_misses: s.data_block_misses,
            index_block_hits: s.index_block_hits,
            index_block_misses: s.index_block_misses,
            filter_block_hits: s.filter_block_hits,
            filter_block_misses: s.filter_block_misses,
            write_slowdowns: s.write_slowdowns,
            write_slowdown_micros: s.write_slowdown_micros,
            write_stops: s.write_stops,
            write_stop_micros: s.write_stop_micros,
            longest_write_wait_micros: s.longest_write_wait_micros,
            live_snapshots: s.live_snapshots,
            lock_granted: l.granted,
            lock_waits: l.waits,
            lock_wait_micros: u64::try_from(l.wait_time.as_micros()).unwrap_or(u64::MAX),
            lock_timeouts: l.timeouts,
            lock_deadlocks: l.deadlocks,
            locked_keys: l.locked_keys,
            gap_locks: l.gap_locks,
            insert_waits: l.insert_waits,
            write_amplification: s.write_amplification(),
            space_amplification: s.space_amplification(),
            block_reads_per_get: s.block_reads_per_get(),
            block_cache_hit_rate: s.block_cache_hit_rate(),
            compaction_files_moved: s.compaction_files_moved,
        }
    }
}

/// Fills `*stats` with the engine's statistics. Pass `stats_size = sizeof(riptide_stats_t)`:
/// at most that many bytes are written (a larger size than this library knows gets zeros
/// after the known fields), so callers and libraries of different versions agree.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `stats` is NULL or `stats_size` writable bytes;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_stats(
    db: *mut riptide_db_t,
    stats: *mut riptide_stats_t,
    stats_size: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            if stats.is_null() {
                return Err(null_arg("stats"));
            }
            let filled = arg_ref(db, "db")?.with(|db| {
                Ok(riptide_stats_t::new(
                    &db.statistics(),
                    &db.lock_statistics(),
                ))
            })?;
            let ours = std::mem::size_of::<riptide_stats_t>();
            let n = ours.min(stats_size);
            let dst = stats.cast::<u8>();
            // SAFETY: `dst` is non-NULL (checked above) and, per the contract, has
            // `stats_size >= n` writable bytes; `filled` is a local, so no overlap.
            std::ptr::copy_nonoverlapping(std::ptr::from_ref(&filled).cast::<u8>(), dst, n);
            if stats_size > ours {
                // SAFETY: per the contract `dst` has `stats_size` writable bytes, so the
                // range `ours..stats_size` is in bounds.
                std::ptr::write_bytes(dst.add(ours), 0, stats_size - ours);
            }
            Ok(())
        })
    }
}

/// Stores in `*report` a multi-line, human-readable statistics report (counters, per-level
/// files and bytes, row locks), NUL-terminated, to free with `riptide_free`. This is what
/// `SHOW ENGINE RIPTIDE STATUS` prints.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `report` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_stats_report(
    db: *mut riptide_db_t,
    report: *mut *mut c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(report, "report")?;
            out.set(std::ptr::null_mut());
            let text = arg_ref(db, "db")?.with(|db| Ok(db.statistics().to_string()))?;
            out.set(malloc_string(&text)?);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr::null_mut;

    use super::*;
    use crate::db::{riptide_db_destroy, riptide_db_open};
    use crate::kv::{riptide_get, riptide_put};
    use crate::memory::{riptide_free, riptide_free_value};

    fn text(p: *const c_char) -> String {
        assert!(!p.is_null());
        // SAFETY: the table holds NUL-terminated strings for the process's life.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The table's entry `i`.
    fn stat(i: usize) -> &'static riptide_stat_t {
        // SAFETY: a non-NULL entry lives as long as the process and never changes.
        unsafe { riptide_stat_at(i).as_ref() }.unwrap()
    }

    #[test]
    fn the_table_is_statistics_table() {
        assert_eq!(riptide_stat_count(), Statistics::TABLE.len());
        assert!(riptide_stat_at(riptide_stat_count()).is_null());
        for (i, spec) in Statistics::TABLE.iter().enumerate() {
            let e = stat(i);
            assert_eq!(text(e.name), spec.name);
            assert_eq!(text(e.doc), spec.doc);
            let kind = match spec.kind {
                StatKind::Counter => RIPTIDE_STAT_COUNTER,
                StatKind::Gauge => RIPTIDE_STAT_GAUGE,
                StatKind::Ratio => RIPTIDE_STAT_RATIO,
            };
            assert_eq!(e.kind, kind, "{}", spec.name);
        }
    }

    #[test]
    fn fill_reports_every_value_from_one_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().to_str().unwrap()).unwrap();
        let mut db = null_mut();
        let mut msg: *mut c_char = null_mut();
        let index = |name: &str| (0..riptide_stat_count()).find(|&i| text(stat(i).name) == name);
        let n = riptide_stat_count();
        let mut values = vec![riptide_stat_value_t { integer: 7 }; n + 2];
        // SAFETY: `path` is NUL-terminated, NULL options mean the defaults, `db` and `msg`
        // are writable; `values` holds `n + 2` values; every handle is freed once at the end.
        unsafe {
            assert_eq!(
                riptide_db_open(path.as_ptr(), std::ptr::null(), &mut db, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            for k in 0..10u8 {
                let key = [b'k', k];
                let st = riptide_put(
                    db,
                    std::ptr::null(),
                    key.as_ptr().cast(),
                    2,
                    key.as_ptr().cast(),
                    2,
                    &mut msg,
                );
                assert_eq!(st, riptide_status_t::RIPTIDE_OK);
            }
            let (mut v, mut len, mut found) = (null_mut(), 0usize, false);
            let st = riptide_get(
                db,
                std::ptr::null(),
                std::ptr::null(),
                c"k".as_ptr(),
                1,
                &mut v,
                &mut len,
                &mut found,
                &mut msg,
            );
            assert_eq!(st, riptide_status_t::RIPTIDE_OK);
            riptide_free_value(v, len);
            assert_eq!(
                riptide_stats_fill(db, values.as_mut_ptr(), n + 2, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            assert_eq!(values[index("keys_written").unwrap()].integer, 10);
            assert_eq!(values[index("bytes_written").unwrap()].integer, 40);
            assert_eq!(values[index("gets").unwrap()].integer, 1);
            assert_eq!(values[index("lock_granted").unwrap()].integer, 0);
            let amp = values[index("write_amplification").unwrap()].ratio;
            assert!(amp > 1.0 && amp.is_finite(), "{amp}");
            // Past the table: zeros.
            assert_eq!(values[n].integer, 0);
            assert_eq!(values[n + 1].integer, 0);
            // A shorter array gets the first values only.
            let mut first = [riptide_stat_value_t { integer: 99 }; 1];
            assert_eq!(
                riptide_stats_fill(db, first.as_mut_ptr(), 1, &mut msg),
                riptide_status_t::RIPTIDE_OK
            );
            assert_eq!(first[0].integer, values[0].integer);
            assert_eq!(
                riptide_stats_fill(db, null_mut(), 1, &mut msg),
                riptide_status_t::RIPTIDE_INVALID_ARGUMENT
            );
            assert!(text(msg).contains("`values`"));
            riptide_free(msg.cast());
            assert_eq!(
                riptide_stats_fill(null_mut(), first.as_mut_ptr(), 1, &mut msg),
                riptide_status_t::RIPTIDE_INVALID_ARGUMENT
            );
            riptide_free(msg.cast());
            riptide_db_destroy(db);
        }
    }
}
