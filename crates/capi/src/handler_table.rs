//! `riptide_htable_t`: an open table of the handler layer: its indexes, auto-increment
//! counter, row estimate, range estimates, ANALYZE and OPTIMIZE.

use std::ffi::c_char;
use std::sync::Arc;

use riptide_handler::Table;

use crate::ffi_util::{Out, arg_ref, destroy_handle, opt_bytes, query};
use crate::handler_util::hguard;
use crate::status::riptide_status_t;

/// An open table (opaque, shared): made by `riptide_handler_open_table`, freed by
/// `riptide_htable_release`. Thread-safe.
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
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(table) }
}

/// Number of indexes of the table (the primary or hidden key included); 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_index_count(table: *const riptide_htable_t) -> usize {
    // SAFETY: forwarded contract.
    unsafe { query(table, 0, |t| t.table.index_count()) }
}

/// The version of the caller's key encoding the table was created with
/// (`riptide_handler_set_key_format`; 0 for tables created before it was recorded, and for
/// NULL).
///
/// # Safety
///
/// `table` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_key_format(table: *const riptide_htable_t) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { query(table, 0, |t| u32::from(t.table.key_format())) }
}

/// The table's row count estimate; 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_row_estimate(table: *const riptide_htable_t) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { query(table, 0, |t| t.table.row_estimate()) }
}

/// The next auto-increment value (for `SHOW CREATE TABLE`); 0 for NULL.
///
/// # Safety
///
/// `table` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_autoinc_next(table: *const riptide_htable_t) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { query(table, 0, |t| t.table.autoinc_next()) }
}

/// Reserves `count` auto-increment values spaced by `increment`, the first congruent to
/// `offset`, and stores the first in `*first`. Never hands out a value twice, also across
/// crashes.
///
/// # Safety
///
/// `table` NULL or live; `first` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_reserve_autoinc(
    table: *const riptide_htable_t,
    count: u64,
    offset: u64,
    increment: u64,
    first: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(first, "first")?;
            // SAFETY: forwarded contract.
            let t = arg_ref(table, "table")?;
            out.set(t.table.reserve_autoinc(count, offset, increment)?);
            Ok(())
        })
    }
}

/// Keeps the next auto-increment value at most `max + 1` (`max`: the column's largest
/// value), so a failed out-of-range insert does not move it past the column's range. A NULL
/// `table` is ignored.
///
/// # Safety
///
/// `table` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_cap_autoinc(table: *const riptide_htable_t, max: u64) {
    // SAFETY: forwarded contract.
    unsafe { query(table, (), |t| t.table.cap_autoinc(max)) }
}

/// Records an explicit value stored in the auto-increment column: later reservations
/// start above it.
///
/// # Safety
///
/// `table` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_observe_autoinc(
    table: *const riptide_htable_t,
    value: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            arg_ref(table, "table")?.table.observe_autoinc(value)
        })
    }
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
/// `table` NULL or live; `lower` and `upper` NULL (length 0) or readable; `count` and
/// `errmsg` NULL or writable.
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
    // SAFETY: the caller upholds this function's contract (`table`, the bounds, the
    // out-parameters).
    unsafe {
        hguard(errmsg, || {
            let out = Out::new(count, "count")?;
            out.set(0);
            let t = arg_ref(table, "table")?;
            let lower = opt_bytes(lower, lower_len, "lower")?.map(|l| (l, lower_after));
            let upper = opt_bytes(upper, upper_len, "upper")?.map(|u| (u, upper_inclusive));
            out.set(t.table.estimate_tuple_range(index, lower, upper, limit)?);
            Ok(())
        })
    }
}

/// `ANALYZE TABLE`: counts the table's rows (newest committed state), makes the count the
/// row estimate (`riptide_htable_row_estimate`) and persists it; the count in `*rows`
/// (may be NULL).
///
/// # Safety
///
/// `table` NULL or live; `rows` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_refresh_statistics(
    table: *const riptide_htable_t,
    rows: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let count = arg_ref(table, "table")?.table.refresh_statistics()?;
            if !rows.is_null() {
                // SAFETY: per the contract, a non-NULL `rows` is writable.
                rows.write(count);
            }
            Ok(())
        })
    }
}

/// `OPTIMIZE TABLE`: flushes and compacts the key range of every index of the table down
/// to the last level, dropping deleted rows and tombstones no snapshot needs. Runs in the
/// calling thread.
///
/// # Safety
///
/// `table` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_compact(
    table: *const riptide_htable_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            arg_ref(table, "table")?.table.compact()
        })
    }
}
