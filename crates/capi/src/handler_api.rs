//! `riptide_handler_t`, `riptide_htable_t`, `riptide_hsession_t`: MariaDB handler semantics
//! (crate `riptide-handler`) for the plugin: data dictionary, tables with secondary indexes,
//! sessions (one transaction per connection, statement savepoints) and row operations with
//! unique checks, auto-increment and hidden row ids, estimates.

use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;
use std::time::Duration;

use riptide::{Error, InterruptHandle, LockedRead, TxnIterator};
use riptide_handler::{
    HandlerEngine, HandlerError, IndexKind, IndexSpec, Isolation, RowLock, SecondaryKey, Session,
    SessionOptions, Table,
};

use crate::db::riptide_db_t;
use crate::ffi_util::{
    CResult, Out, arg_mut, arg_ref, bytes, destroy_handle, guard_status, into_handle, opt_bytes,
    query,
};
use crate::kv::ValueOut;
use crate::memory::malloc_string;
use crate::status::riptide_status_t;
use crate::txn_iter::riptide_txn_iter_t;
use crate::xid::xid_from_parts;

/// Index kind `riptide_index_spec_t.kind`: the primary key (index 0).
pub const RIPTIDE_INDEX_PRIMARY: i32 = 1;
/// Index kind: the hidden 8-byte row id of a table without a primary key (index 0).
pub const RIPTIDE_INDEX_HIDDEN_PK: i32 = 2;
/// Index kind: a secondary index (indexes 1 and up).
pub const RIPTIDE_INDEX_SECONDARY: i32 = 3;

/// Row lock mode of `riptide_hsession_get_row`: a plain read.
pub const RIPTIDE_ROW_LOCK_NONE: i32 = 0;
/// Row lock mode: shared (`LOCK IN SHARE MODE`).
pub const RIPTIDE_ROW_LOCK_SHARED: i32 = 1;
/// Row lock mode: exclusive (`FOR UPDATE`, reads of writing statements).
pub const RIPTIDE_ROW_LOCK_EXCLUSIVE: i32 = 2;
/// Row lock mode: shared, never waiting (`LOCK IN SHARE MODE SKIP LOCKED`). With
/// `riptide_hsession_get_row`, a row another session holds in a conflicting mode is
/// reported as `RIPTIDE_BUSY` (skip it); with `riptide_hsession_iter_create_locking`, the
/// iterator steps over such entries.
pub const RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED: i32 = 3;
/// Row lock mode: exclusive, never waiting (`FOR UPDATE SKIP LOCKED`); as
/// `RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED`.
pub const RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED: i32 = 4;

/// Session isolation (`riptide_hsession_begin`): READ UNCOMMITTED (runs as read committed).
pub const RIPTIDE_HISO_READ_UNCOMMITTED: i32 = 0;
/// Session isolation: READ COMMITTED.
pub const RIPTIDE_HISO_READ_COMMITTED: i32 = 1;
/// Session isolation: REPEATABLE READ.
pub const RIPTIDE_HISO_REPEATABLE_READ: i32 = 2;
/// Session isolation: SERIALIZABLE (runs as repeatable read).
pub const RIPTIDE_HISO_SERIALIZABLE: i32 = 3;

/// The handler layer over one database (opaque). Made by `riptide_handler_open`, freed by
/// `riptide_handler_destroy`. Thread-safe.
pub struct riptide_handler_t {
    engine: HandlerEngine,
}

/// An open table (opaque, shared): made by `riptide_handler_open_table`, freed by
/// `riptide_htable_release`. Thread-safe.
pub struct riptide_htable_t {
    table: Arc<Table>,
}

/// A session (opaque): one transaction with statement savepoints. Made by
/// `riptide_hsession_begin`, freed by `riptide_hsession_destroy` (rolls back if unfinished).
/// One thread at a time; destroy its iterators first.
pub struct riptide_hsession_t {
    session: Session,
}

/// An interrupter of one session's lock waits (opaque): made by
/// `riptide_hsession_interrupter`, freed by `riptide_hinterrupt_destroy`. Thread-safe:
/// `riptide_hinterrupt_fire` may be called from any thread, while the session's thread runs
/// any call (a lock wait included), and after the session was destroyed (then it does
/// nothing useful, harmlessly). It holds neither the session nor the database open.
pub struct riptide_hinterrupt_t {
    handle: InterruptHandle,
}

/// One index of a table being created.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_index_spec_t {
    /// `RIPTIDE_INDEX_PRIMARY`, `RIPTIDE_INDEX_HIDDEN_PK` or `RIPTIDE_INDEX_SECONDARY`.
    pub kind: i32,
    /// Duplicates refused (secondary indexes; the primary key always is).
    pub unique: bool,
    /// Number of key parts.
    pub key_parts: u16,
    /// NUL-terminated name (for error messages); NULL for none.
    pub name: *const c_char,
}

/// One secondary key of a row: the memcomparable bytes and whether a part is NULL (a key with
/// a NULL part never conflicts in a unique index).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_hkey_t {
    /// Key bytes (NULL only with `len` 0).
    pub data: *const c_char,
    /// Length of `data`.
    pub len: usize,
    /// Whether a key part is NULL.
    pub has_null: bool,
}

/// Maps a handler error to a status and message (`RIPTIDE_DUPLICATE_KEY` for duplicates,
/// with the index written to `dup`).
fn handler_status(e: HandlerError, dup: Option<&Out<usize>>) -> (riptide_status_t, String) {
    match e {
        HandlerError::Duplicate { index, .. } => {
            if let Some(d) = dup {
                d.set(index);
            }
            (riptide_status_t::RIPTIDE_DUPLICATE_KEY, e.to_string())
        }
        HandlerError::Engine(e) => (riptide_status_t::from_kind(e.kind()), e.to_string()),
    }
}

/// Runs a body returning handler results under the panic guard.
///
/// # Safety
///
/// `errmsg` is NULL or writable.
unsafe fn hguard(
    errmsg: *mut *mut c_char,
    body: impl FnOnce() -> Result<(), HandlerError>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { guard_status(errmsg, || body().map_err(|e| handler_status(e, None))) }
}

/// The secondary keys `(keys, n)`.
///
/// # Safety
///
/// `keys` is NULL (with `n` 0) or points to `n` readable `riptide_hkey_t` whose byte strings
/// are readable and unchanged during `'a`.
unsafe fn sec_keys<'a>(keys: *const riptide_hkey_t, n: usize) -> CResult<Vec<SecondaryKey<'a>>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if keys.is_null() {
        return Err(Error::invalid_argument(format!(
            "parameter `keys` is NULL but its count is {n}"
        )));
    }
    // SAFETY: per this function's contract, `keys` points to `n` readable entries.
    let slice = unsafe { std::slice::from_raw_parts(keys, n) };
    slice
        .iter()
        .map(|k| {
            // SAFETY: forwarded contract.
            let key = unsafe { bytes(k.data, k.len, "keys[].data") }?;
            Ok(SecondaryKey {
                key,
                has_null: k.has_null,
            })
        })
        .collect()
}

/// Opens the handler layer on `db` (creates the `__riptide_dd` column family on first use)
/// and stores it in `*handler`. The handler shares the database: free it before closing
/// the database, or the database closes only when the handler is freed.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `handler` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_open(
    db: *mut riptide_db_t,
    handler: *mut *mut riptide_handler_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard_status(errmsg, || {
            // SAFETY: forwarded contract.
            let run = || -> Result<(), HandlerError> {
                // SAFETY: forwarded contract.
                let out = Out::new(handler, "handler")?;
                out.set(std::ptr::null_mut());
                // SAFETY: forwarded contract.
                let shared = arg_ref(db, "db")?.shared()?;
                let engine = HandlerEngine::open(shared)?;
                out.set(into_handle(riptide_handler_t { engine }));
                Ok(())
            };
            run().map_err(|e| handler_status(e, None))
        })
    }
}

/// Persists the exact auto-increment and row id counters of every open table (a clean
/// shutdown; after a crash the reserved ranges are skipped instead).
///
/// # Safety
///
/// `handler` is NULL or a live handler; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_close(
    handler: *mut riptide_handler_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            arg_ref(handler, "handler")?.engine.close()
        })
    }
}

/// Sets the version of the caller's key encoding that every table created from now on
/// records (read back with `riptide_htable_key_format`; default 0): the handler treats keys
/// as bytes, and a caller that changes how it encodes key parts reads each table with the
/// encoding it was created with. `RIPTIDE_INVALID_ARGUMENT` above 127.
///
/// # Safety
///
/// `handler` is NULL or a live handler; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_set_key_format(
    handler: *mut riptide_handler_t,
    format: u32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            let format = u8::try_from(format).map_err(|_| {
                riptide::Error::invalid_argument(format!("key format {format} is above 127"))
            })?;
            // SAFETY: forwarded contract.
            arg_ref(handler, "handler")?.engine.set_key_format(format)
        })
    }
}

/// Frees a handler (its tables and sessions stay usable until freed). NULL is a no-op.
///
/// # Safety
///
/// `handler` is NULL or a live handler not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_destroy(handler: *mut riptide_handler_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(handler) }
}

/// Creates table `name` with `n` indexes (`specs[0]` primary or hidden pk, the rest
/// secondary) and the first auto-increment value `autoinc_start` (0: 1). New index ids are
/// never reused; a leftover entry of the same name is dropped with its data.
///
/// # Safety
///
/// `handler` is NULL or live; `(name, name_len)` readable; `specs` NULL (with `n` 0) or `n`
/// readable specs whose names are NULL or NUL-terminated; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_create_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    specs: *const riptide_index_spec_t,
    n: usize,
    autoinc_start: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        create_table(
            handler,
            name,
            name_len,
            specs,
            n,
            autoinc_start,
            false,
            errmsg,
        )
    }
}

/// Creates a temporary table (`CREATE TEMPORARY TABLE`): as
/// [`riptide_handler_create_table`], and the next open of the handler drops it with its
/// rows (a temporary table never outlives the server process that created it).
///
/// # Safety
///
/// As [`riptide_handler_create_table`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_create_temporary_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    specs: *const riptide_index_spec_t,
    n: usize,
    autoinc_start: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        create_table(
            handler,
            name,
            name_len,
            specs,
            n,
            autoinc_start,
            true,
            errmsg,
        )
    }
}

/// The body of both create calls.
///
/// # Safety
///
/// As [`riptide_handler_create_table`].
#[allow(clippy::too_many_arguments)]
unsafe fn create_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    specs: *const riptide_index_spec_t,
    n: usize,
    autoinc_start: u64,
    temporary: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            if n > 0 && specs.is_null() {
                return Err(Error::invalid_argument("parameter `specs` is NULL").into());
            }
            let raw = if n == 0 {
                &[][..]
            } else {
                // SAFETY: per the contract, `specs` points to `n` readable specs.
                std::slice::from_raw_parts(specs, n)
            };
            let mut list = Vec::with_capacity(n);
            for (i, s) in raw.iter().enumerate() {
                let kind = match s.kind {
                    RIPTIDE_INDEX_PRIMARY => IndexKind::Primary,
                    RIPTIDE_INDEX_HIDDEN_PK => IndexKind::HiddenPk,
                    RIPTIDE_INDEX_SECONDARY => IndexKind::Secondary,
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "specs[{i}].kind {other} is not an index kind"
                        ))
                        .into());
                    }
                };
                let iname = if s.name.is_null() {
                    String::new()
                } else {
                    // SAFETY: per the contract, a non-NULL name is NUL-terminated.
                    CStr::from_ptr(s.name).to_string_lossy().into_owned()
                };
                list.push(IndexSpec {
                    kind,
                    unique: s.unique,
                    key_parts: s.key_parts,
                    name: iname,
                });
            }
            if temporary {
                h.engine
                    .create_temporary_table(name, &list, autoinc_start)?;
            } else {
                h.engine.create_table(name, &list, autoinc_start)?;
            }
            Ok(())
        })
    }
}

/// Drops table `name` (one range delete per index and the dictionary entry, in one batch).
/// `*existed` tells whether it was in the dictionary (may be NULL).
///
/// # Safety
///
/// `handler` NULL or live; `(name, name_len)` readable; `existed` and `errmsg` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_drop_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    existed: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            let found = h.engine.drop_table(name)?;
            if !existed.is_null() {
                // SAFETY: per the contract, a non-NULL `existed` is writable.
                existed.write(found);
            }
            Ok(())
        })
    }
}

/// Marks table `name` temporary (`temporary` true: the next open of the handler drops it
/// with its rows, as a table made by [`riptide_handler_create_temporary_table`]) or removes
/// the mark (false). The plugin marks the target of an ALTER TABLE copy while it commits the
/// copied rows in pieces, so a crash mid-copy leaves no half-copied table, and unmarks it
/// when the copy is complete. `RIPTIDE_NOT_FOUND` if the table does not exist.
///
/// # Safety
///
/// `handler` NULL or live; `(name, name_len)` readable; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_mark_temporary(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    temporary: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            h.engine.mark_temporary(name, temporary)
        })
    }
}

/// Renames table `from` to `to`: `RIPTIDE_NOT_FOUND` if `from` does not exist,
/// `RIPTIDE_BUSY` if `to` does.
///
/// # Safety
///
/// `handler` NULL or live; both names readable; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_rename_table(
    handler: *mut riptide_handler_t,
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let from = bytes(from, from_len, "from")?;
            // SAFETY: forwarded contract.
            let to = bytes(to, to_len, "to")?;
            h.engine.rename_table(from, to)
        })
    }
}

/// Empties table `name` (new index ids, old keys range-deleted, auto-increment back to 1).
/// `RIPTIDE_NOT_FOUND` if it does not exist.
///
/// # Safety
///
/// As `riptide_handler_drop_table`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_truncate_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            h.engine.truncate_table(name)?;
            Ok(())
        })
    }
}

/// Waits until no prepared transaction (`XA PREPARE`, the server's internal two-phase
/// commit; prepared in this process or recovered after a restart, and not committed or
/// rolled back yet) holds a write to any index of table `name`, for up to `timeout_ms`
/// milliseconds (0: look once), looking every 10 ms: `RIPTIDE_OK` once none does,
/// `RIPTIDE_TIMED_OUT` (the message names the table, the index and the xid) after the
/// limit. Call it before a DDL that range-deletes or replaces the table's keys (`TRUNCATE`,
/// `DROP`, `RENAME`, a copying `ALTER`), while holding the DDL's exclusive metadata lock
/// (so no transaction can prepare a new write to the table meanwhile): a prepared
/// transaction's rows are not in the database yet, and its later commit would otherwise
/// write them where they are lost (InnoDB makes the DDL wait and fail with error 1205, lock
/// wait timeout). A table that is not in the dictionary has nothing to wait for:
/// `RIPTIDE_OK`. Runs on the calling thread; thread-safe.
///
/// # Safety
///
/// `handler` NULL or live; `(name, name_len)` readable; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_wait_prepared(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            h.engine
                .wait_for_prepared(name, Duration::from_millis(timeout_ms))
        })
    }
}

/// Opens table `name` into `*table`; `RIPTIDE_NOT_FOUND` if the dictionary has no such table.
///
/// # Safety
///
/// `handler` NULL or live; name readable; `table` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_open_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    table: *mut *mut riptide_htable_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(table, "table")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            // SAFETY: forwarded contract.
            let name = bytes(name, name_len, "name")?;
            match h.engine.open_table(name)? {
                Some(t) => {
                    out.set(into_handle(riptide_htable_t { table: t }));
                    Ok(())
                }
                None => Err(Error::not_found(format!(
                    "table {} is not in the data dictionary",
                    String::from_utf8_lossy(name)
                ))
                .into()),
            }
        })
    }
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

/// Copies into `buf` (capacity `buf_len`) the bytes every key of index `index` starts with,
/// as iterators from `riptide_hsession_iter_create` return them (callers build seek targets
/// as these bytes + their key bytes), and their length into `*len`. `RIPTIDE_INVALID_ARGUMENT`
/// if `index` is out of range or `buf` too small.
///
/// # Safety
///
/// `table` NULL or live; `buf` NULL or writable for `buf_len` bytes; `len` and `errmsg` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_index_prefix(
    table: *const riptide_htable_t,
    index: usize,
    buf: *mut c_char,
    buf_len: usize,
    len: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(len, "len")?;
            out.set(0);
            // SAFETY: forwarded contract.
            let t = arg_ref(table, "table")?;
            let prefix = t.table.index_prefix(index)?;
            if buf.is_null() || buf_len < prefix.len() {
                return Err(Error::invalid_argument(format!(
                    "parameter `buf` holds {buf_len} bytes, the prefix needs {}",
                    prefix.len()
                ))
                .into());
            }
            // SAFETY: `buf` is non-NULL and, per the contract, writable for `buf_len` bytes,
            // which is at least the prefix's length.
            std::ptr::copy_nonoverlapping(prefix.as_ptr(), buf.cast::<u8>(), prefix.len());
            out.set(prefix.len());
            Ok(())
        })
    }
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

/// A new hidden row id (tables without a primary key) in `*id`; the pk is its 8 bytes
/// big-endian. Never handed out twice, also across crashes.
///
/// # Safety
///
/// `table` NULL or live; `id` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_next_row_id(
    table: *const riptide_htable_t,
    id: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(id, "id")?;
            // SAFETY: forwarded contract.
            out.set(arg_ref(table, "table")?.table.next_hidden_row_id()?);
            Ok(())
        })
    }
}

/// Counts keys of index `index` in `[lower, upper)` (relative to the index: no id prefix;
/// NULL `upper`: to the end of the index) in the newest committed state, up to `limit` (at
/// the limit: the larger of `limit` and a quarter of the row estimate), into `*count`.
///
/// # Safety
///
/// `table` NULL or live; bounds NULL (length 0) or readable; `count` and `errmsg` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_htable_estimate_range(
    table: *const riptide_htable_t,
    index: usize,
    lower: *const c_char,
    lower_len: usize,
    upper: *const c_char,
    upper_len: usize,
    limit: u64,
    count: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(count, "count")?;
            out.set(0);
            // SAFETY: forwarded contract.
            let t = arg_ref(table, "table")?;
            // SAFETY: forwarded contract.
            let lower = bytes(lower, lower_len, "lower")?;
            // SAFETY: forwarded contract.
            let upper = opt_bytes(upper, upper_len, "upper")?;
            out.set(t.table.estimate_range(index, lower, upper, limit)?);
            Ok(())
        })
    }
}

/// Splits a secondary index entry key (as a `riptide_hsession_iter_create` iterator returns
/// it) into its primary key: `*pk_offset` and `*pk_len` locate the pk inside `key`. Returns
/// false (and sets both to 0) if the key is not a well-formed entry.
///
/// # Safety
///
/// `(key, key_len)` readable; `pk_offset` and `pk_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_entry_pk(
    key: *const c_char,
    key_len: usize,
    pk_offset: *mut usize,
    pk_len: *mut usize,
) -> bool {
    crate::ffi_util::guard_value(false, || {
        // SAFETY: forwarded contract.
        let (Ok(off), Ok(len)) = (unsafe { Out::new(pk_offset, "pk_offset") }, unsafe {
            // SAFETY: forwarded contract.
            Out::new(pk_len, "pk_len")
        }) else {
            return false;
        };
        off.set(0);
        len.set(0);
        // SAFETY: forwarded contract.
        let Ok(k) = (unsafe { bytes(key, key_len, "key") }) else {
            return false;
        };
        match riptide_handler::decode_secondary_entry(k) {
            Some((_, pk)) => {
                off.set(k.len() - 2 - pk.len());
                len.set(pk.len());
                true
            }
            None => false,
        }
    })
}

/// Begins a session (one pessimistic transaction) with `isolation` (`RIPTIDE_HISO_*`) and
/// a lock wait limit of `lock_timeout_ms` (0: the default, 50 s). Under repeatable read the
/// snapshot is taken at the first read (`riptide_hsession_begin_snapshot` takes it at once).
///
/// # Safety
///
/// `handler` NULL or live; `session` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { begin_session(handler, isolation, lock_timeout_ms, false, session, errmsg) }
}

/// As `riptide_hsession_begin`, but the session takes its read snapshot now, not at its
/// first read (`START TRANSACTION WITH CONSISTENT SNAPSHOT`; under read committed every
/// read still sees the newest committed data).
///
/// # Safety
///
/// As `riptide_hsession_begin`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin_snapshot(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { begin_session(handler, isolation, lock_timeout_ms, true, session, errmsg) }
}

/// Whether the session has taken its read snapshot (at begin with
/// `riptide_hsession_begin_snapshot`, else at its first read under repeatable read); false
/// for NULL.
///
/// # Safety
///
/// `session` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_has_snapshot(session: *const riptide_hsession_t) -> bool {
    // SAFETY: forwarded contract.
    unsafe { query(session, false, |s| s.session.has_snapshot()) }
}

/// Whether the session has put or deleted an entry of secondary index `index` (>= 1) of
/// `table` and not rolled it back; false for NULL or an index that is not secondary. While
/// it has not, an index-only read may take its rows from the index entries; once it has, an
/// entry of the session's snapshot can point to a row the session has since changed, so each
/// row must be read and checked against its entry.
///
/// # Safety
///
/// `session` and `table` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_wrote_index(
    session: *const riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
) -> bool {
    // SAFETY: forwarded contract.
    unsafe {
        query(session, false, |s| {
            // SAFETY: forwarded contract.
            query(table, false, |t| s.session.wrote_index(&t.table, index))
        })
    }
}

/// Makes an interrupter of the session's lock waits in `*interrupter` (MariaDB's `KILL
/// QUERY`, a shutdown): `riptide_hinterrupt_fire` on it makes the session's current lock
/// wait (a row lock of any call, a unique check, an insert into a locked gap, a locking
/// iterator's step) fail promptly with `RIPTIDE_INTERRUPTED`, and every later wait fail so
/// at once, until `riptide_hsession_clear_interrupt`. Locks granted without waiting are not
/// affected. The session stays usable after an interrupted wait, as after
/// `RIPTIDE_TIMED_OUT`: it keeps the locks it held, and the call that failed changed
/// nothing. Each call makes a new handle on the same interrupt; free each with
/// `riptide_hinterrupt_destroy`.
///
/// Threads: call this on the session's own thread (like any session call); then the handle
/// belongs to whoever holds it, and `riptide_hinterrupt_fire` may be called from any thread
/// at any time, the session's own calls and its destruction included. The handle must not
/// be destroyed while another thread fires it.
///
/// # Safety
///
/// `session` NULL or live; `interrupter` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_interrupter(
    session: *const riptide_hsession_t,
    interrupter: *mut *mut riptide_hinterrupt_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(interrupter, "interrupter")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let s = &arg_ref(session, "session")?.session;
            out.set(into_handle(riptide_hinterrupt_t {
                handle: s.interrupt_handle(),
            }));
            Ok(())
        })
    }
}

/// Interrupts the lock waits of the session `interrupter` was made for: its current wait,
/// if any, ends with `RIPTIDE_INTERRUPTED` (within a thread wake-up, well under a
/// millisecond on an idle machine), and so does every later one until the session calls
/// `riptide_hsession_clear_interrupt`. Callable from any thread, concurrently with any call
/// on the session (that is the point) and after the session was destroyed (then nothing
/// happens). Briefly wakes every lock waiter of the database (the others go back to
/// waiting): meant for rare events, not a per-row call. NULL is a no-op.
///
/// # Safety
///
/// `interrupter` is NULL or a live handle, not destroyed during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_fire(interrupter: *const riptide_hinterrupt_t) {
    // SAFETY: forwarded contract.
    unsafe { query(interrupter, (), |h| h.handle.interrupt()) }
}

/// Frees an interrupter (its session is not affected; an interrupt it fired stays in force
/// until `riptide_hsession_clear_interrupt`). NULL is a no-op.
///
/// # Safety
///
/// `interrupter` is NULL or a live handle that no thread uses during or after the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_destroy(interrupter: *mut riptide_hinterrupt_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(interrupter) }
}

/// Re-arms the session after `riptide_hinterrupt_fire`: its lock waits wait normally again.
/// MariaDB: at the start of each statement, so that a `KILL QUERY` that arrived just before
/// a wait began is not lost within its statement, and does not outlive it. NULL is a no-op.
///
/// # Safety
///
/// `session` NULL or live (used by this thread, as any session call).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_clear_interrupt(session: *mut riptide_hsession_t) {
    // SAFETY: forwarded contract.
    unsafe { query(session.cast_const(), (), |s| s.session.clear_interrupt()) }
}

/// Sets the limit of the session's lock waits from now on to `timeout_ms` milliseconds
/// (every wait: row locks of reads and writes, unique checks, inserts into a locked gap,
/// locking iterator steps), until changed again: MariaDB's `SELECT ... NOWAIT` and `WAIT n`
/// for one statement (set it before, restore the session's value after). Unlike
/// `riptide_hsession_begin`'s `lock_timeout_ms`, 0 here means "do not wait": a lock that is
/// not free fails with `RIPTIDE_TIMED_OUT` at once. A wait already in progress keeps its
/// limit.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_lock_timeout(
    session: *mut riptide_hsession_t,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            s.set_lock_timeout(Duration::from_millis(timeout_ms));
            Ok(())
        })
    }
}

/// Bytes the session's transaction holds in memory for its writes and locks (keys, values,
/// undo and lock records; `riptide::Transaction::approximate_memory`); 0 for NULL. The
/// MariaDB plugin asks before a commit or rollback, to hand a big transaction's freed memory
/// back to the system afterwards.
///
/// # Safety
///
/// `session` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_approximate_memory(
    session: *const riptide_hsession_t,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe { query(session, 0, |s| s.session.transaction().approximate_memory()) }
}

/// The body of `riptide_hsession_begin` and `riptide_hsession_begin_snapshot`.
///
/// # Safety
///
/// As `riptide_hsession_begin`.
unsafe fn begin_session(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    snapshot_at_begin: bool,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(session, "session")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            let isolation = match isolation {
                RIPTIDE_HISO_READ_UNCOMMITTED => Isolation::ReadUncommitted,
                RIPTIDE_HISO_READ_COMMITTED => Isolation::ReadCommitted,
                RIPTIDE_HISO_REPEATABLE_READ => Isolation::RepeatableRead,
                RIPTIDE_HISO_SERIALIZABLE => Isolation::Serializable,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "isolation {other} is not a RIPTIDE_HISO_* value"
                    ))
                    .into());
                }
            };
            let mut opts = SessionOptions {
                isolation,
                snapshot_at_begin,
                ..SessionOptions::default()
            };
            if lock_timeout_ms > 0 {
                opts.lock_timeout = Duration::from_millis(lock_timeout_ms);
            }
            let s = h.engine.begin_session(opts)?;
            out.set(into_handle(riptide_hsession_t { session: s }));
            Ok(())
        })
    }
}

/// Frees a session, rolling back an unfinished transaction. NULL is a no-op.
///
/// # Safety
///
/// `session` is NULL or live and not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_destroy(session: *mut riptide_hsession_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(session) }
}

/// Runs `f` on the session.
///
/// # Safety
///
/// `session` NULL or live and used by this thread alone; `errmsg` NULL or writable.
unsafe fn with_session(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
    f: impl FnOnce(&mut Session) -> Result<(), HandlerError>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            f(&mut arg_mut(session, "session")?.session)
        })
    }
}

/// Commits the session's transaction (all tables and indexes in one atomic batch). The
/// session is finished afterwards, success or not: destroy it.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_commit(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::commit) }
}

/// Prepares the session's transaction under the xid `(format_id, gtrid, bqual)` (two-phase
/// commit, phase one: the writes are durable in the WAL, not yet visible, the locks stay
/// held). Finish it with `riptide_hsession_commit` / `riptide_hsession_rollback`; a session
/// destroyed while prepared leaves the transaction prepared, to be finished with
/// `riptide_commit_prepared` / `riptide_rollback_prepared` (also after a restart:
/// `riptide_prepared_list`). After a failure the transaction is rolled back.
///
/// # Safety
///
/// `session` NULL or live; each `(pointer, length)` pair NULL or `length` readable bytes;
/// `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_prepare(
    session: *mut riptide_hsession_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let xid = xid_from_parts(format_id, gtrid, gtrid_len, bqual, bqual_len)?;
            s.prepare(&xid)
        })
    }
}

/// Rolls back the session's transaction (already rolled back after a conflict: OK).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_rollback(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::rollback) }
}

/// Pushes a savepoint (SQL `SAVEPOINT`, or a statement's).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_savepoint(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::set_savepoint) }
}

/// Undoes everything since the newest savepoint and removes it (`RIPTIDE_NOT_FOUND` if
/// none). Row locks taken after it are released.
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_rollback_to_savepoint(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::rollback_to_savepoint) }
}

/// Forgets the newest savepoint, keeping its writes (`RIPTIDE_NOT_FOUND` if none).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_release_savepoint(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::release_savepoint) }
}

/// Releases the savepoint at `index` (0: the oldest open one) without undoing anything and
/// keeps the savepoints set after it (MariaDB: a `SAVEPOINT` that reuses a name releases
/// only the older savepoint of that name). `RIPTIDE_NOT_FOUND` if fewer than `index + 1`
/// savepoints are open.
///
/// # Safety
///
/// `session` is NULL or a live session; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_release_savepoint_at(
    session: *mut riptide_hsession_t,
    index: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, |s| s.release_savepoint_at(index)) }
}

/// Begins a statement (pushes its savepoint).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin_statement(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::begin_statement) }
}

/// Ends the open statement: keeps (`success`) or undoes its writes. No-op without one.
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_end_statement(
    session: *mut riptide_hsession_t,
    success: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, |s| s.end_statement(success)) }
}

/// Number of open savepoints; 0 for NULL.
///
/// # Safety
///
/// `session` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_depth(
    session: *const riptide_hsession_t,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe { query(session, 0, |s| s.session.savepoint_depth()) }
}

/// Inserts a row: primary key `pk` (for a hidden-pk table: `riptide_htable_next_row_id`'s
/// id, 8 bytes big-endian), one key per secondary index in order, and the row bytes.
/// `RIPTIDE_DUPLICATE_KEY` with `*dup_index` (0: the primary key) when the primary key or
/// a unique key without NULL parts exists.
///
/// # Safety
///
/// `session` NULL or live; `table` NULL or live; every byte string readable; `keys` NULL
/// (with `nkeys` 0) or `nkeys` readable keys; `dup_index` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_insert(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    keys: *const riptide_hkey_t,
    nkeys: usize,
    row: *const c_char,
    row_len: usize,
    dup_index: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard_status(errmsg, || {
            let dup = (!dup_index.is_null()).then(|| {
                // SAFETY: non-NULL and, per the contract, writable.
                Out::new(dup_index, "dup_index")
            });
            let dup = match dup {
                Some(Ok(d)) => Some(d),
                _ => None,
            };
            let run = || -> Result<(), HandlerError> {
                // SAFETY: forwarded contract.
                let s = &mut arg_mut(session, "session")?.session;
                // SAFETY: forwarded contract.
                let t = &arg_ref(table, "table")?.table;
                // SAFETY: forwarded contract.
                let pk = bytes(pk, pk_len, "pk")?;
                // SAFETY: forwarded contract.
                let keys = sec_keys(keys, nkeys)?;
                // SAFETY: forwarded contract.
                let row = bytes(row, row_len, "row")?;
                s.insert(t, pk, &keys, row)
            };
            run().map_err(|e| handler_status(e, dup.as_ref()))
        })
    }
}

/// Updates a row from (`old_pk`, `old_keys`) to (`new_pk`, `new_keys`, `row`); both key
/// arrays have `nkeys` entries. Unchanged secondary entries are not rewritten. Duplicates
/// as `riptide_hsession_insert`.
///
/// # Safety
///
/// As `riptide_hsession_insert`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_update(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    old_pk: *const c_char,
    old_pk_len: usize,
    old_keys: *const riptide_hkey_t,
    new_pk: *const c_char,
    new_pk_len: usize,
    new_keys: *const riptide_hkey_t,
    nkeys: usize,
    row: *const c_char,
    row_len: usize,
    dup_index: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard_status(errmsg, || {
            let dup = (!dup_index.is_null()).then(|| {
                // SAFETY: non-NULL and, per the contract, writable.
                Out::new(dup_index, "dup_index")
            });
            let dup = match dup {
                Some(Ok(d)) => Some(d),
                _ => None,
            };
            let run = || -> Result<(), HandlerError> {
                // SAFETY: forwarded contract.
                let s = &mut arg_mut(session, "session")?.session;
                // SAFETY: forwarded contract.
                let t = &arg_ref(table, "table")?.table;
                // SAFETY: forwarded contract.
                let old_pk = bytes(old_pk, old_pk_len, "old_pk")?;
                // SAFETY: forwarded contract.
                let new_pk = bytes(new_pk, new_pk_len, "new_pk")?;
                // SAFETY: forwarded contract.
                let old_keys = sec_keys(old_keys, nkeys)?;
                // SAFETY: forwarded contract.
                let new_keys = sec_keys(new_keys, nkeys)?;
                // SAFETY: forwarded contract.
                let row = bytes(row, row_len, "row")?;
                s.update(t, old_pk, &old_keys, new_pk, &new_keys, row)
            };
            run().map_err(|e| handler_status(e, dup.as_ref()))
        })
    }
}

/// Deletes the row `pk` whose secondary keys are `keys` (`nkeys`, one per secondary index).
///
/// # Safety
///
/// As `riptide_hsession_insert`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_delete(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    keys: *const riptide_hkey_t,
    nkeys: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let pk = bytes(pk, pk_len, "pk")?;
            // SAFETY: forwarded contract.
            let keys = sec_keys(keys, nkeys)?;
            s.delete(t, pk, &keys)
        })
    }
}

/// Reads the row with primary key `pk` as the session sees it, locking it per `lock`
/// (`RIPTIDE_ROW_LOCK_*`). Results as `riptide_txn_get` (free the value with
/// `riptide_free_value`). With `RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED` or
/// `RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED` the read never waits: a row whose lock another
/// session holds in a conflicting mode (or, for shared, has queued an exclusive request on)
/// is `RIPTIDE_BUSY` with `*found` false and nothing locked (`SKIP LOCKED`: skip the row);
/// any other row is locked and read as with the waiting mode. No other case returns
/// `RIPTIDE_BUSY`.
///
/// # Safety
///
/// `session` and `table` NULL or live; `pk` readable; `value`, `value_len`, `found`,
/// `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_get_row(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    lock: i32,
    value: *mut *mut c_char,
    value_len: *mut usize,
    found: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let out = ValueOut::new(value, value_len, found)?;
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let pk = bytes(pk, pk_len, "pk")?;
            let (mode, skip_locked) = row_lock(lock)?;
            if !skip_locked {
                out.deliver(s.get_row(t, pk, mode)?)?;
                return Ok(());
            }
            match s.get_row_skip_locked(t, pk, mode)? {
                LockedRead::Value(v) => out.deliver(v)?,
                LockedRead::LockedByOther => {
                    return Err(Error::busy(format!(
                        "row \"{}\" of table id {} is locked by another transaction \
                         (skip locked)",
                        pk.escape_ascii(),
                        t.id()
                    ))
                    .into());
                }
            }
            Ok(())
        })
    }
}

/// InnoDB's `unlock_row`: under READ COMMITTED (and READ UNCOMMITTED), releases the row
/// locks of the row a locking read returned last when the statement did not want it: the
/// lock on primary key `(pk, pk_len)` of `table` and, for a row reached through secondary
/// index `index` (> 0), the lock on its entry `(entry, entry_len)` (the iterator's key;
/// NULL with length 0 for none). Only locks first taken since savepoint depth `since` (the
/// session's savepoint depth right after the statement's own savepoint was set, 0 when the
/// statement has none) and on keys the session has not written go; under REPEATABLE READ
/// and SERIALIZABLE nothing does. Stores how many locks were released in `*released` (if
/// not NULL).
///
/// # Safety
///
/// `session` and `table` NULL or live; `entry` NULL (with length 0) or readable; `pk`
/// readable; `released` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_unlock_row(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    entry: *const c_char,
    entry_len: usize,
    pk: *const c_char,
    pk_len: usize,
    since: usize,
    released: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let entry = opt_bytes(entry, entry_len, "entry")?;
            // SAFETY: forwarded contract.
            let pk = bytes(pk, pk_len, "pk")?;
            let n = s.unlock_row(t, index, entry, pk, since)?;
            if !released.is_null() {
                // SAFETY: non-NULL, and writable per the contract.
                released.write(n);
            }
            Ok(())
        })
    }
}

/// The `RowLock` of a `RIPTIDE_ROW_LOCK_*` value, and whether it is a `SKIP LOCKED` mode.
fn row_lock(lock: i32) -> Result<(RowLock, bool), HandlerError> {
    match lock {
        RIPTIDE_ROW_LOCK_NONE => Ok((RowLock::None, false)),
        RIPTIDE_ROW_LOCK_SHARED => Ok((RowLock::Shared, false)),
        RIPTIDE_ROW_LOCK_EXCLUSIVE => Ok((RowLock::Exclusive, false)),
        RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED => Ok((RowLock::Shared, true)),
        RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED => Ok((RowLock::Exclusive, true)),
        other => Err(Error::invalid_argument(format!(
            "lock {other} is not a RIPTIDE_ROW_LOCK_* value"
        ))
        .into()),
    }
}

/// The body of the `riptide_hsession_iter_create*` functions: checks the handles, clears
/// `*iter`, makes the iterator with `make` and hands it out.
///
/// # Safety
///
/// `session` and `table` NULL or live; `iter` and `errmsg` NULL or writable.
unsafe fn create_session_iter(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
    make: impl FnOnce(&Session, &Table) -> Result<TxnIterator, HandlerError>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(iter, "iter")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let s = &arg_ref(session, "session")?.session;
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            let it = make(s, t)?;
            out.set(into_handle(riptide_txn_iter_t { it }));
            Ok(())
        })
    }
}

/// Creates a transaction iterator over index `index` of `table` as the session sees it
/// (keys start with the 4-byte index id; primary entries hold the row; secondary entries
/// are empty, locate their pk with `riptide_handler_entry_pk`). Use the `riptide_txn_iter_*`
/// functions on it; destroy it before the session.
///
/// # Safety
///
/// `session` and `table` NULL or live; `iter` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_iter_create(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { create_session_iter(session, table, iter, errmsg, |s, t| s.iter(t, index)) }
}

/// Like `riptide_hsession_iter_create`, for a *locking read* when `lock` is
/// `RIPTIDE_ROW_LOCK_SHARED` or `RIPTIDE_ROW_LOCK_EXCLUSIVE` (`FOR UPDATE`, `LOCK IN SHARE
/// MODE`, SERIALIZABLE reads, the source scans of `INSERT ... SELECT`, `UPDATE`, `DELETE`):
/// the iterator reads the newest committed entries merged with the session's own, locks
/// each entry it stops on in that mode (waiting like a locking point read: a wait that
/// times out or would deadlock is the step's error) and, under REPEATABLE READ and
/// SERIALIZABLE, gap-locks the range it walks until the transaction ends, so other
/// sessions' inserts there wait. While it is open it also reserves the rest of the index.
/// `RIPTIDE_ROW_LOCK_NONE` makes a plain iterator.
///
/// `RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED` / `RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED` make a
/// `SKIP LOCKED` iterator, which never waits: entries whose lock another session holds in a
/// conflicting mode, and other sessions' uncommitted inserts, are stepped over (neither
/// returned nor locked); the entries it returns are locked in that mode. Gaps are locked as
/// by the waiting modes (REPEATABLE READ and SERIALIZABLE: the walked range, skipped
/// entries and the gaps around them included, until the transaction ends; READ COMMITTED:
/// none), since a gap lock never makes the scan itself wait, only other sessions' inserts.
/// InnoDB takes next-key locks on the records it returns and nothing for a record it
/// skips, so this holds slightly more (inserts right next to a skipped entry wait too).
/// Read each entry's row with `riptide_hsession_get_row` in the same skip-locked mode, so
/// that the row read does not wait either.
///
/// # Safety
///
/// `session` and `table` NULL or live; `iter` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_iter_create_locking(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    lock: i32,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        create_session_iter(session, table, iter, errmsg, |s, t| {
            let (mode, skip_locked) = row_lock(lock)?;
            if skip_locked {
                s.iter_skip_locked(t, index, mode)
            } else {
                s.iter_locking(t, index, mode)
            }
        })
    }
}

/// Like `riptide_hsession_iter_create`, but the iterator reads the newest committed entries
/// merged with the session's own, whatever the session's snapshot, and locks nothing. With
/// `riptide_hsession_lock_value` first it is the duplicate check of a MariaDB long UNIQUE
/// key (the server's index read of the key's hash).
///
/// # Safety
///
/// `session` and `table` NULL or live; `iter` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_iter_create_current(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        create_session_iter(session, table, iter, errmsg, |s, t| {
            s.iter_current(t, index)
        })
    }
}

/// Locks the value `(key, key_len)` (the secondary key bytes, without the index id) of
/// secondary index `index` of `table` exclusively until the session's transaction ends,
/// as the engine's own unique checks do, without reading anything: waits while another
/// session holds it (`RIPTIDE_TIMED_OUT`, `RIPTIDE_DEADLOCK`). The MariaDB handler takes
/// it before the server's duplicate check of a long UNIQUE key, so that two sessions
/// inserting one value check one after the other. `RIPTIDE_INVALID_ARGUMENT` if `index` is
/// not a secondary index.
///
/// # Safety
///
/// `session` and `table` NULL or live; `key` readable for `key_len` bytes; `errmsg` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_lock_value(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let key = bytes(key, key_len, "key")?;
            s.lock_value(t, index, key)
        })
    }
}

/// What `riptide_hsession_check_table` calls for each row: computes the row's secondary keys
/// from its primary key `(pk, pk_len)` and row bytes `(row, row_len)` (as stored by
/// `riptide_hsession_insert`), one per secondary index, into `keys[0..nkeys]`. The key bytes
/// must stay valid until the callback is called again or the check returns. Returns false
/// if the row bytes cannot be decoded (the check counts that as a problem of the primary
/// key). Must not unwind.
pub type riptide_hkeys_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        pk: *const c_char,
        pk_len: usize,
        row: *const c_char,
        row_len: usize,
        keys: *mut riptide_hkey_t,
        nkeys: usize,
    ) -> bool,
>;

/// `CHECK TABLE`: verifies `table` as the session sees it: every row has, in every
/// secondary index, the entry `keys_fn` computes for it, and every secondary entry points
/// to an existing row whose key for that index is the entry's key; a row `keys_fn` cannot
/// decode is a problem of the primary key (index 0). Stores the number of
/// inconsistencies in `*problems` and, if there are any, a report of the first
/// `max_problems` of them in `*report` (one line each, `index `name`: what`, NUL-terminated;
/// free it with `riptide_free`; NULL when there is none). Inconsistencies are not an error
/// (`RIPTIDE_OK`); a failing read or callback is.
///
/// # Safety
///
/// `session` and `table` NULL or live; `keys_fn` NULL or a callback honouring its contract
/// with `ctx`; `problems`, `report` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_check_table(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    keys_fn: riptide_hkeys_fn,
    ctx: *mut c_void,
    max_problems: usize,
    problems: *mut u64,
    report: *mut *mut c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let count_out = Out::new(problems, "problems")?;
            count_out.set(0);
            // SAFETY: forwarded contract.
            let report_out = Out::new(report, "report")?;
            report_out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            let Some(f) = keys_fn else {
                return Err(Error::invalid_argument("parameter `keys_fn` is NULL").into());
            };
            let n = t.secondary_count();
            let mut scratch = vec![
                riptide_hkey_t {
                    data: std::ptr::null(),
                    len: 0,
                    has_null: false,
                };
                n
            ];
            let mut keys_of =
                |pk: &[u8], row: &[u8]| -> Result<Option<Vec<Vec<u8>>>, HandlerError> {
                    // SAFETY: `pk` and `row` are readable for their lengths during the call,
                    // `scratch` holds `n` writable keys, and the callback honours its contract.
                    let ok = f(
                        ctx,
                        pk.as_ptr().cast(),
                        pk.len(),
                        row.as_ptr().cast(),
                        row.len(),
                        scratch.as_mut_ptr(),
                        n,
                    );
                    if !ok {
                        return Ok(None);
                    }
                    // SAFETY: the callback filled `n` keys whose bytes stay valid until it is
                    // called again; they are copied here.
                    let keys = sec_keys(scratch.as_ptr(), n)?;
                    Ok(Some(keys.iter().map(|k| k.key.to_vec()).collect()))
                };
            let r = s.check_table(t, &mut keys_of, max_problems)?;
            count_out.set(r.problem_count);
            if !r.problems.is_empty() {
                let text: String = r.problems.iter().map(|p| format!("{p}\n")).collect();
                report_out.set(malloc_string(&text)?);
            }
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
