//! `riptide_htable_t`: an open table of the handler layer: its indexes, auto-increment
//! counter, row estimate, range estimates, ANALYZE and OPTIMIZE.

use std::ffi::c_char;
use std::sync::Arc;

use riptide::Error;
use riptide_handler::Table;

use crate::ffi_util::{CResult, ErrMsg, Out, arg_ref, destroy_handle, null_arg, opt_bytes, query};
use crate::handler_util::hguard;
use crate::memory::malloc_bytes;
use crate::status::riptide_status_t;

/// An open table (opaque, shared): made by `riptide_handler_open_table`, freed by
/// `riptide_htable_release`. Thread-safe: any number of threads (and sessions) may use one
/// table handle at once.
pub struct riptide_htable_t {
    pub(crate) table: Arc<Table>,
}

/// Releases a table handle. NULL is a no-op.
///
/// # Safety
///
/// `table` is NULL or a live table handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_release(table: *mut riptide_htable_t) {
    // SAFETY: per `# Safety`, `table` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_handler_open_table` and never used again.
    unsafe { destroy_handle(table) }
}

/// Number of indexes of the table (the primary or hidden key included); 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_index_count(table: *const riptide_htable_t) -> usize {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, 0, |t| t.table.index_count()) }
}

/// The version of the caller's key encoding the table was created with
/// (`riptide_handler_set_key_format`; 0 for tables created before it was recorded, and for
/// NULL).
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_key_format(table: *const riptide_htable_t) -> u32 {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, 0, |t| u32::from(t.table.key_format())) }
}

/// The bytes the caller keeps with the table (`riptide_hbuild_set_caller_data`; the MariaDB
/// plugin: its row layout after instant column changes): `*len` bytes at `*data`, valid while
/// `table` lives (a table handle's definition never changes). Empty (`*len` 0) when there
/// are none, and for NULL `table`. Out-parameters that are NULL are skipped.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `data` and `len` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_caller_data(
    table: *const riptide_htable_t,
    data: *mut *const u8,
    len: *mut usize,
) {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract; the
    // bytes belong to the table's definition, which the handle keeps alive unchanged.
    let (ptr, n) = unsafe {
        query(table, (std::ptr::null(), 0), |t| {
            let d = t.table.caller_data();
            (d.as_ptr(), d.len())
        })
    };
    if !data.is_null() {
        // SAFETY: per `# Safety`, a non-NULL `data` is writable.
        unsafe { data.write(ptr) };
    }
    if !len.is_null() {
        // SAFETY: per `# Safety`, a non-NULL `len` is writable.
        unsafe { len.write(n) };
    }
}

/// The table's row count estimate; 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_row_estimate(table: *const riptide_htable_t) -> u64 {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, 0, |t| t.table.row_estimate()) }
}

/// The next auto-increment value (for `SHOW CREATE TABLE`); 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_autoinc_next(table: *const riptide_htable_t) -> u64 {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, 0, |t| t.table.autoinc_next()) }
}

/// Reserves `count` auto-increment values spaced by `increment`, the first congruent to
/// `offset`, and stores the first in `*first`. Never hands out a value twice, also across
/// crashes.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `first` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_reserve_autoinc(
    table: *const riptide_htable_t,
    count: u64,
    offset: u64,
    increment: u64,
    first: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `first` and
    // `errmsg` and the handle `table`.
    let (out, table, errmsg) = unsafe {
        (
            Out::new(first, "first"),
            arg_ref(table, "table"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (out, t) = (out?, table?);
        out.set(t.table.reserve_autoinc(count, offset, increment)?);
        Ok(())
    })
}

/// Keeps the next auto-increment value at most `max + 1` (`max`: the column's largest
/// value), so a failed out-of-range insert does not move it past the column's range. A NULL
/// `table` is ignored.
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_cap_autoinc(table: *const riptide_htable_t, max: u64) {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, (), |t| t.table.cap_autoinc(max)) }
}

/// Keeps the table's inserts off the bulk-load path for good (`riptide_hsession_set_bulk_load`):
/// for a table whose uniqueness the server checks by reading it (long unique keys, `WITHOUT
/// OVERLAPS`), which would not see rows waiting in a bulk load. A NULL `table` is ignored.
///
/// # Safety
///
/// `table` is NULL or a live table handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_forbid_bulk_load(table: *const riptide_htable_t) {
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, (), |t| t.table.forbid_bulk_load()) }
}

/// Records an explicit value stored in the auto-increment column: later reservations
/// start above it.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_observe_autoinc(
    table: *const riptide_htable_t,
    value: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `table` and the
    // out-parameter `errmsg`.
    let (table, errmsg) = unsafe { (arg_ref(table, "table"), ErrMsg::new(errmsg)) };
    hguard(errmsg, || table?.table.observe_autoinc(value))
}

/// Counts the entries of index `index` in a range of key tuples (MariaDB's
/// `records_in_range`), in the newest committed state, up to `limit` (at the limit: the
/// larger of `limit` and a quarter of the row estimate), into `*count`. The range starts at
/// the first entry at or (`lower_after`) past every entry that starts with the tuple
/// `lower` (NULL: the start of the index) and ends before the first entry at or
/// (`upper_inclusive`) past every entry that starts with `upper` (NULL: the end of the
/// index).
///
/// # Safety
///
/// `table` is NULL or a live table handle; `(lower, lower_len)` and `(upper, upper_len)` are
/// NULL (with length 0) or their length in readable bytes; `count` and `errmsg` are NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_estimate_range(
    table: *const riptide_htable_t,
    index: usize,
    lower: *const c_char,
    lower_len: usize,
    lower_after: bool,
    upper: *const c_char,
    upper_len: usize,
    upper_inclusive: bool,
    limit: u64,
    count: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `count` and
    // `errmsg`, the handle `table` and the byte strings `lower` and `upper`.
    let (out, table, lower, upper, errmsg) = unsafe {
        (
            Out::new(count, "count"),
            arg_ref(table, "table"),
            opt_bytes(lower, lower_len, "lower"),
            opt_bytes(upper, upper_len, "upper"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(0);
        let t = table?;
        let lower = lower?.map(|l| (l, lower_after));
        let upper = upper?.map(|u| (u, upper_inclusive));
        out.set(t.table.estimate_tuple_range(index, lower, upper, limit)?);
        Ok(())
    })
}

/// `ANALYZE TABLE`'s sample positions in index `index`: up to `count` key tuples, in
/// order, spread evenly over the bytes the index holds in table files (data block
/// boundaries from the tables' index blocks; entries still only in the memtables give
/// none), for the caller to seek to (`riptide_hcursor_seek`, `RIPTIDE_HSEEK_AT_OR_AFTER`)
/// and read a few entries at each. Into `*keys` goes a buffer of `*keys_len` bytes, freed
/// with `riptide_free_value`, holding each tuple as its length (4 bytes, little-endian)
/// followed by its bytes; NULL and 0 when there is none.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `keys`, `keys_len` and `errmsg` are NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_sample_index(
    table: *const riptide_htable_t,
    index: usize,
    count: usize,
    keys: *mut *mut c_char,
    keys_len: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `table` and the
    // out-parameters `keys`, `keys_len` and `errmsg`.
    let (table, keys, keys_len, errmsg) = unsafe {
        (
            arg_ref(table, "table"),
            Out::new(keys, "keys"),
            Out::new(keys_len, "keys_len"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (keys, keys_len) = (keys?, keys_len?);
        keys.set(std::ptr::null_mut());
        keys_len.set(0);
        let tuples = table?.table.sample_index(index, count)?;
        if tuples.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        for t in &tuples {
            let len = u32::try_from(t.len()).map_err(|_| {
                Error::invalid_argument(format!("a sampled key of {} bytes", t.len()))
            })?;
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(t);
        }
        keys.set(malloc_bytes(&buf)?);
        keys_len.set(buf.len());
        Ok(())
    })
}

/// `ANALYZE TABLE`: counts the table's rows (newest committed state), makes the count the
/// row estimate (`riptide_htable_row_estimate`) and persists it; the count in `*rows`
/// (may be NULL).
///
/// # Safety
///
/// `table` is NULL or a live table handle; `rows` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_refresh_statistics(
    table: *const riptide_htable_t,
    rows: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `table` and the
    // optional out-parameters `rows` and `errmsg`.
    let (table, rows, errmsg) = unsafe {
        (
            arg_ref(table, "table"),
            Out::optional(rows),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let count = table?.table.refresh_statistics()?;
        if let Some(out) = rows {
            out.set(count);
        }
        Ok(())
    })
}

/// The most numbers `riptide_htable_set_index_stats` keeps for one table.
pub const RIPTIDE_INDEX_STATS_MAX: usize = 1 << 16;

/// Stores the caller's `n` numbers `values` about the table's indexes (the MariaDB plugin,
/// at `ANALYZE TABLE`: the row count, then the distinct prefixes of every key part of every
/// index) with the table's counters, persisted before this returns, replacing earlier
/// ones. `riptide_htable_index_stats` returns them, also after a restart, until the table's
/// indexes change (an in-place ADD or DROP INDEX; `ALTER TABLE` that copies and
/// `TRUNCATE` make a new table without them). `InvalidArgument` for more than
/// `RIPTIDE_INDEX_STATS_MAX` numbers or `values` NULL with `n` > 0.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `(values, n)` follows the array rule
/// (`ffi_util` module docs); `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_set_index_stats(
    table: *const riptide_htable_t,
    values: *const u64,
    n: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `table` and the
    // optional out-parameter `errmsg`.
    let (table, errmsg) = unsafe { (arg_ref(table, "table"), ErrMsg::new(errmsg)) };
    let values: CResult<Vec<u64>> = if n > RIPTIDE_INDEX_STATS_MAX {
        Err(Error::invalid_argument(format!(
            "{n} index statistics are more than the {RIPTIDE_INDEX_STATS_MAX} a table keeps"
        )))
    } else if n == 0 {
        Ok(Vec::new())
    } else if values.is_null() {
        Err(null_arg("values"))
    } else {
        // SAFETY: not NULL, so by the array rule (this function's contract) `values`
        // points to `n` readable `u64` that nothing writes during the call.
        Ok(unsafe { std::slice::from_raw_parts(values, n) }.to_vec())
    };
    hguard(errmsg, || {
        table?.table.set_index_stats(values?)?;
        Ok(())
    })
}

/// The numbers `riptide_htable_set_index_stats` stored for the table's current indexes:
/// copies up to `cap` of them into `out` and returns how many there are (0 for none, or
/// for NULL `table`); a return above `cap` means `out` got only the first `cap`.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `out` is NULL (then `cap` must be 0) or
/// writable for `cap` `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_index_stats(
    table: *const riptide_htable_t,
    out: *mut u64,
    cap: usize,
) -> usize {
    let copy_out = |t: &riptide_htable_t| {
        let Some(stats) = t.table.index_stats() else {
            return 0;
        };
        if !out.is_null() {
            for (i, v) in stats.iter().take(cap).enumerate() {
                // SAFETY: per `# Safety`, a non-NULL `out` is writable for `cap` values, and
                // `i < cap`.
                unsafe { out.add(i).write(*v) };
            }
        }
        stats.len()
    };
    // SAFETY: per `# Safety`, `table` follows the handle rule of the ffi_util contract.
    unsafe { query(table, 0, copy_out) }
}

/// `OPTIMIZE TABLE`: flushes and compacts the key range of every index of the table down
/// to the last level, dropping deleted rows and tombstones no snapshot needs. Runs in the
/// calling thread.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_compact(
    table: *const riptide_htable_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `table` and the
    // out-parameter `errmsg`.
    let (table, errmsg) = unsafe { (arg_ref(table, "table"), ErrMsg::new(errmsg)) };
    hguard(errmsg, || table?.table.compact())
}
