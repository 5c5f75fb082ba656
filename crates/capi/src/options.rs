//! `riptide_options_t`: how a database is opened and tuned. One setter per builder of
//! `riptide::Options`; each setter's doc gives the default and the nearest RocksDB option.

use std::ffi::c_char;
use std::time::Duration;

use riptide::{Compression, Error, Options, RecoveryMode, SyncMode};

use crate::ffi_util::{CResult, arg_mut, destroy_handle, guard, guard_value, into_handle};
use crate::status::riptide_status_t;

/// Database options (opaque). Made by `riptide_options_create`, freed by
/// `riptide_options_destroy`. `riptide_db_open` copies it, so it may be freed right after.
/// Not for concurrent use from several threads.
pub struct riptide_options_t {
    pub(crate) opts: Options,
}

/// Sync mode: never fsync the WAL except at segment rotation and close (survives a process
/// crash, not a power loss).
pub const RIPTIDE_SYNC_NONE: i32 = 0;
/// Sync mode: fsync the WAL before every write is acknowledged (the default).
pub const RIPTIDE_SYNC_FULL: i32 = 1;
/// Sync mode: a background thread fsyncs the WAL every `interval_ms` milliseconds.
pub const RIPTIDE_SYNC_INTERVAL: i32 = 2;

/// Compression: table blocks are stored as they are (the default).
pub const RIPTIDE_COMPRESSION_NONE: i32 = 0;
/// Compression: table blocks are compressed with zstd at the given level.
pub const RIPTIDE_COMPRESSION_ZSTD: i32 = 1;

/// Recovery mode: a torn WAL tail is cut off; damage anywhere else fails the open (default).
pub const RIPTIDE_RECOVERY_TOLERATE_CORRUPTED_TAIL: i32 = 0;
/// Recovery mode: any WAL damage, a torn tail included, fails the open.
pub const RIPTIDE_RECOVERY_ABSOLUTE_CONSISTENCY: i32 = 1;
/// Recovery mode: replay stops at the first damaged record and keeps the intact prefix.
pub const RIPTIDE_RECOVERY_POINT_IN_TIME: i32 = 2;

/// New options with every default. Never NULL except if memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_options_create() -> *mut riptide_options_t {
    guard_value(std::ptr::null_mut(), || {
        into_handle(riptide_options_t {
            opts: Options::default(),
        })
    })
}

/// Frees options. NULL is a no-op.
///
/// # Safety
///
/// `options` is NULL or a live handle from `riptide_options_create`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_destroy(options: *mut riptide_options_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(options) }
}

/// Applies `f` to the options behind `options`.
///
/// # Safety
///
/// `options` is NULL or a live handle not used concurrently; `errmsg` is NULL or writable.
unsafe fn set(
    options: *mut riptide_options_t,
    errmsg: *mut *mut c_char,
    f: impl FnOnce(Options) -> CResult<Options>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_mut(options, "options")?;
            h.opts = f(std::mem::take(&mut h.opts))?;
            Ok(())
        })
    }
}

/// Create the database if the directory holds none. Default true (RocksDB
/// `create_if_missing`, default false there).
///
/// # Safety
///
/// `options` is NULL or a live options handle; `errmsg` is NULL or writable. The same holds
/// for every `riptide_options_set_*` function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_create_if_missing(
    options: *mut riptide_options_t,
    value: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.create_if_missing(value))) }
}

/// Fail to open if a database already exists. Default false (RocksDB `error_if_exists`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_error_if_exists(
    options: *mut riptide_options_t,
    value: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.error_if_exists(value))) }
}

/// Memtable size at which it is frozen and queued for flush. Default 64 MiB (RocksDB
/// `write_buffer_size`). Minimum 4 KiB.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_write_buffer_size(
    options: *mut riptide_options_t,
    bytes: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.write_buffer_size(bytes))) }
}

/// Frozen memtables per column family that may wait for flush before writers stop. Default 2
/// (RocksDB `max_write_buffer_number` - 1). Minimum 1.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_immutable_memtables(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_immutable_memtables(count))) }
}

/// When the WAL is fsynced: `RIPTIDE_SYNC_NONE`, `RIPTIDE_SYNC_FULL` (the default; RocksDB
/// `WriteOptions::sync = true`) or `RIPTIDE_SYNC_INTERVAL` every `interval_ms` milliseconds
/// (at least 1). `interval_ms` is ignored by the other modes. An unknown mode is
/// `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_sync_mode(
    options: *mut riptide_options_t,
    mode: i32,
    interval_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            let mode = match mode {
                RIPTIDE_SYNC_NONE => SyncMode::None,
                RIPTIDE_SYNC_FULL => SyncMode::Full,
                RIPTIDE_SYNC_INTERVAL if interval_ms > 0 => {
                    SyncMode::Interval(Duration::from_millis(interval_ms))
                }
                RIPTIDE_SYNC_INTERVAL => {
                    return Err(Error::invalid_argument(
                        "sync interval must be at least 1 ms",
                    ));
                }
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown sync mode {other} (expected RIPTIDE_SYNC_NONE, _FULL or _INTERVAL)"
                    )));
                }
            };
            Ok(o.sync_mode(mode))
        })
    }
}

/// What WAL damage is tolerated at open: one of the `RIPTIDE_RECOVERY_*` constants. Default
/// `RIPTIDE_RECOVERY_TOLERATE_CORRUPTED_TAIL` (RocksDB `wal_recovery_mode`). An unknown mode
/// is `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_recovery_mode(
    options: *mut riptide_options_t,
    mode: i32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            let mode = match mode {
                RIPTIDE_RECOVERY_TOLERATE_CORRUPTED_TAIL => RecoveryMode::TolerateCorruptedTail,
                RIPTIDE_RECOVERY_ABSOLUTE_CONSISTENCY => RecoveryMode::AbsoluteConsistency,
                RIPTIDE_RECOVERY_POINT_IN_TIME => RecoveryMode::PointInTime,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown recovery mode {other}"
                    )));
                }
            };
            Ok(o.recovery_mode(mode))
        })
    }
}

/// Capacity of the shared block cache in bytes. Default 64 MiB (RocksDB `block_cache`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_block_cache_size(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.block_cache_size(bytes))) }
}

/// Target uncompressed size of a data block. Default 4096 (RocksDB `block_size`).
/// Minimum 256.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_block_size(
    options: *mut riptide_options_t,
    bytes: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            if bytes > riptide_sstable::options::MAX_BLOCK_SIZE {
                return Err(Error::invalid_argument(format!(
                    "block size {bytes} exceeds {}",
                    riptide_sstable::options::MAX_BLOCK_SIZE
                )));
            }
            Ok(o.block_size(bytes))
        })
    }
}

/// Keys between restart points in a block. Default 16 (RocksDB `block_restart_interval`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_restart_interval(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            if count > u32::MAX as usize {
                return Err(Error::invalid_argument(format!(
                    "restart interval {count} is too large"
                )));
            }
            Ok(o.restart_interval(count))
        })
    }
}

/// Compression of table blocks: `RIPTIDE_COMPRESSION_NONE` (the default; `level` ignored) or
/// `RIPTIDE_COMPRESSION_ZSTD` at `level` (zstd's range, negative levels are its fast modes)
/// (RocksDB `compression`). An unknown type or an out-of-range level is
/// `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_compression(
    options: *mut riptide_options_t,
    compression: i32,
    level: i32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            let c = match compression {
                RIPTIDE_COMPRESSION_NONE => Compression::None,
                RIPTIDE_COMPRESSION_ZSTD => Compression::Zstd { level },
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown compression {other} (expected RIPTIDE_COMPRESSION_NONE or _ZSTD)"
                    )));
                }
            };
            riptide_sstable::TableOptions {
                compression: c,
                ..Default::default()
            }
            .validate()?;
            Ok(o.compression(c))
        })
    }
}

/// Bloom filter bits per key, 0 to disable filters, at most 64. Default 10, about 1% false
/// positives (RocksDB `NewBloomFilterPolicy(10)`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_bloom_bits_per_key(
    options: *mut riptide_options_t,
    bits: u32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            if bits > riptide_sstable::options::MAX_BLOOM_BITS_PER_KEY {
                return Err(Error::invalid_argument(format!(
                    "bloom bits per key {bits} exceeds {}",
                    riptide_sstable::options::MAX_BLOOM_BITS_PER_KEY
                )));
            }
            Ok(o.bloom_bits_per_key(bits))
        })
    }
}

/// Number of L0 tables that triggers a merge into L1. Default 4 (RocksDB
/// `level0_file_num_compaction_trigger`). Minimum 2.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_l0_compaction_trigger(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.l0_compaction_trigger(count))) }
}

/// Bound space amplification while a column family is small next to its write buffer
/// (smaller flushes and earlier L0 merges until it holds about 1 GiB of tables with the
/// defaults; see `Options::young_space_bound`). Default true.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_young_space_bound(
    options: *mut riptide_options_t,
    value: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.young_space_bound(value))) }
}

/// Target size of tables written by compaction. Default 64 MiB (RocksDB
/// `target_file_size_base`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_target_file_size(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.target_file_size(bytes))) }
}

/// Bound on the WAL kept for unflushed data: a column family whose active memtable holds
/// back more WAL bytes than this is flushed, so a rarely written one cannot keep every
/// segment alive. 0 (the default) means 4x the `db_write_buffer_size` (RocksDB
/// `max_total_wal_size`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_total_wal_size(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_total_wal_size(bytes))) }
}

/// L0 table count at which writes start slowing down. Default 20 (RocksDB
/// `level0_slowdown_writes_trigger`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_l0_slowdown_trigger(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.l0_slowdown_trigger(count))) }
}

/// L0 table count at which writes stop until compaction catches up. Default 36 (RocksDB
/// `level0_stop_writes_trigger`). Kept above the slowdown trigger.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_l0_stop_trigger(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.l0_stop_trigger(count))) }
}

/// Bytes waiting for compaction at which writes start slowing down. Default 64 GiB (RocksDB
/// `soft_pending_compaction_bytes_limit`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_soft_pending_compaction_bytes(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            Ok(o.soft_pending_compaction_bytes(bytes))
        })
    }
}

/// Bytes waiting for compaction at which writes stop. Default 256 GiB (RocksDB
/// `hard_pending_compaction_bytes_limit`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_hard_pending_compaction_bytes(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            Ok(o.hard_pending_compaction_bytes(bytes))
        })
    }
}

/// Write rate (bytes per second) at the first sign of back-pressure. Default 16 MiB/s
/// (RocksDB `delayed_write_rate`). Minimum 1024.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_delayed_write_rate(
    options: *mut riptide_options_t,
    bytes_per_sec: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.delayed_write_rate(bytes_per_sec))) }
}

/// Memory budget for all memtables of all column families together. Default 256 MiB
/// (RocksDB `db_write_buffer_size`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_db_write_buffer_size(
    options: *mut riptide_options_t,
    bytes: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.db_write_buffer_size(bytes))) }
}

/// Threads flushing frozen memtables: column families flush in parallel, each one by one
/// thread at a time. Default 1, minimum 1, at most 64 (RocksDB `max_background_flushes`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_background_flushes(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_background_flushes(count))) }
}

/// Threads running compactions in parallel. Default 2 (RocksDB
/// `max_background_compactions`). Minimum 1.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_background_compactions(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_background_compactions(count))) }
}

/// Threads one big compaction may be split into. Default 1 (RocksDB `max_subcompactions`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_subcompactions(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_subcompactions(count))) }
}

/// Number of levels, L0 included, clamped to 2..=64. Default 7 (RocksDB `num_levels`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_num_levels(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.num_levels(count))) }
}

/// Target size of the base level. Default 256 MiB (RocksDB `max_bytes_for_level_base`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_bytes_for_level_base(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_bytes_for_level_base(bytes))) }
}

/// Size ratio between adjacent levels, at least 2. Default 10 (RocksDB
/// `max_bytes_for_level_multiplier`). NaN or infinity is `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_level_size_ratio(
    options: *mut riptide_options_t,
    ratio: f64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            finite(ratio, "level size ratio")?;
            Ok(o.level_size_ratio(ratio))
        })
    }
}

/// Size levels from the last level up. Default true (RocksDB
/// `level_compaction_dynamic_level_bytes`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_dynamic_level_bytes(
    options: *mut riptide_options_t,
    value: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.dynamic_level_bytes(value))) }
}

/// Fraction of tombstones (0 to 1) that makes a table due for compaction; 0 disables.
/// Default 0.5 (RocksDB `CompactOnDeletionCollector`). NaN or infinity is
/// `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_tombstone_ratio_trigger(
    options: *mut riptide_options_t,
    ratio: f64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        set(options, errmsg, |o| {
            finite(ratio, "tombstone ratio trigger")?;
            Ok(o.tombstone_ratio_trigger(ratio))
        })
    }
}

/// Minimum entries of a table for the tombstone-density trigger. Default 10,000.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_tombstone_min_entries(
    options: *mut riptide_options_t,
    count: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.tombstone_min_entries(count))) }
}

/// Upper bound on the input bytes of one compaction. Default 25 x target file size (RocksDB
/// `max_compaction_bytes`).
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_compaction_bytes(
    options: *mut riptide_options_t,
    bytes: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_compaction_bytes(bytes))) }
}

/// Most table files kept open at once. Default 512 (RocksDB `max_open_files`). Minimum 2.
///
/// # Safety
///
/// As `riptide_options_set_create_if_missing`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_options_set_max_open_files(
    options: *mut riptide_options_t,
    count: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { set(options, errmsg, |o| Ok(o.max_open_files(count))) }
}

/// `InvalidArgument` unless `v` is a finite number.
fn finite(v: f64, what: &str) -> CResult {
    if v.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{what} must be a finite number, got {v}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_enum_values_and_bad_numbers_are_invalid_arguments() {
        use riptide_status_t::{RIPTIDE_INVALID_ARGUMENT as INVALID, RIPTIDE_OK as OK};
        let o = riptide_options_create();
        assert!(!o.is_null());
        let null = std::ptr::null_mut();
        // SAFETY: `o` is a live options handle until it is destroyed at the end of the
        // block, and a NULL errmsg is allowed.
        unsafe {
            assert_eq!(riptide_options_set_sync_mode(o, 7, 0, null), INVALID);
            assert_eq!(
                riptide_options_set_sync_mode(o, RIPTIDE_SYNC_INTERVAL, 0, null),
                INVALID
            );
            assert_eq!(
                riptide_options_set_sync_mode(o, RIPTIDE_SYNC_INTERVAL, 100, null),
                OK
            );
            assert_eq!(
                riptide_options_set_sync_mode(o, RIPTIDE_SYNC_NONE, 0, null),
                OK
            );
            assert_eq!(riptide_options_set_compression(o, -1, 0, null), INVALID);
            assert_eq!(
                riptide_options_set_compression(o, RIPTIDE_COMPRESSION_ZSTD, 1000, null),
                INVALID
            );
            assert_eq!(
                riptide_options_set_compression(o, RIPTIDE_COMPRESSION_ZSTD, 3, null),
                OK
            );
            assert_eq!(riptide_options_set_recovery_mode(o, 3, null), INVALID);
            assert_eq!(
                riptide_options_set_recovery_mode(o, RIPTIDE_RECOVERY_POINT_IN_TIME, null),
                OK
            );
            assert_eq!(riptide_options_set_bloom_bits_per_key(o, 65, null), INVALID);
            assert_eq!(
                riptide_options_set_level_size_ratio(o, f64::NAN, null),
                INVALID
            );
            assert_eq!(
                riptide_options_set_tombstone_ratio_trigger(o, f64::INFINITY, null),
                INVALID
            );
            assert_eq!(riptide_options_set_block_size(o, usize::MAX, null), INVALID);
            assert_eq!(riptide_options_set_max_open_files(o, 64, null), OK);
            riptide_options_destroy(o);
        }
    }

    #[test]
    fn setters_reject_a_null_handle_naming_it() {
        let mut msg: *mut c_char = std::ptr::null_mut();
        // SAFETY: NULL options is allowed by the contract; `msg` is writable.
        let st = unsafe {
            riptide_options_set_write_buffer_size(std::ptr::null_mut(), 1 << 20, &mut msg)
        };
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        // SAFETY: `msg` is a NUL-terminated message from the library.
        let text = unsafe { std::ffi::CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned();
        assert!(text.contains("`options`"), "{text}");
        // SAFETY: `msg` came from the library and is freed once.
        unsafe { crate::memory::riptide_free(msg.cast()) };
        // SAFETY: NULL is a no-op.
        unsafe { riptide_options_destroy(std::ptr::null_mut()) };
    }
}
