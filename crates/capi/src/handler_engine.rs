//! `riptide_handler_t`: the MariaDB handler layer over one database (crate
//! `riptide-handler`): the data dictionary (CREATE, DROP, RENAME, TRUNCATE, temporary
//! tables), waiting for prepared transactions before DDL, and opening tables.

use std::ffi::c_char;
use std::time::Duration;

use riptide::Error;
use riptide_handler::{HandlerEngine, HandlerError, IndexKind, IndexSpec};

use crate::db::riptide_db_t;
use crate::ffi_util::{CResult, ErrMsg, Out, arg_ref, bytes, c_bytes, destroy_handle, into_handle};
use crate::handler_table::riptide_htable_t;
use crate::handler_util::{handler_status, hguard};
use crate::status::riptide_status_t;

/// Index kind `riptide_index_spec_t.kind`: the primary key (index 0).
pub const RIPTIDE_INDEX_PRIMARY: i32 = 1;

/// Index kind: the hidden 8-byte row id of a table without a primary key (index 0).
pub const RIPTIDE_INDEX_HIDDEN_PK: i32 = 2;

/// Index kind: a secondary index (indexes 1 and up).
pub const RIPTIDE_INDEX_SECONDARY: i32 = 3;

/// The handler layer over one database (opaque). Made by `riptide_handler_open`, freed by
/// `riptide_handler_destroy`. Thread-safe: any number of threads may call on one handler at
/// once.
pub struct riptide_handler_t {
    pub(crate) engine: HandlerEngine,
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

/// A converted array parameter of index specs `(specs, n)`: the `riptide_index_spec_t`
/// entries, each of whose `name` is NULL or follows the C string rule (`ffi_util` module docs)
/// during `'a`.
#[derive(Clone, Copy)]
struct IndexSpecs<'a>(&'a [riptide_index_spec_t]);

impl<'a> IndexSpecs<'a> {
    /// Checks the array `(specs, n)`: NULL with a nonzero count is `InvalidArgument`; with
    /// `n` 0 the pointer is not read. Reads no names yet ([`IndexSpecs::index_specs`]).
    ///
    /// # Safety
    ///
    /// `(specs, n)` follows the array rule (`ffi_util` module docs) during `'a`: NULL with
    /// `n` 0, or `n` readable `riptide_index_spec_t` that nothing writes, each `name` NULL or
    /// following the C string rule.
    unsafe fn new(specs: *const riptide_index_spec_t, n: usize) -> CResult<IndexSpecs<'a>> {
        if n == 0 {
            return Ok(IndexSpecs(&[]));
        }
        if specs.is_null() {
            return Err(Error::invalid_argument("parameter `specs` is NULL"));
        }
        // SAFETY: `specs` is not NULL, so by the array rule (this function's contract) it
        // points to `n` readable `riptide_index_spec_t` (aligned and initialised) that
        // nothing writes during `'a`; being readable memory, they span at most `isize::MAX`
        // bytes.
        Ok(IndexSpecs(unsafe { std::slice::from_raw_parts(specs, n) }))
    }

    /// The specs as the handler takes them, names copied (lossily as UTF-8; NULL: empty); an
    /// unknown kind is `InvalidArgument` (the first such spec in order).
    fn index_specs(self) -> CResult<Vec<IndexSpec>> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // SAFETY: `IndexSpecs::new` required every non-NULL `name` to follow the C
                // string rule during `'a`, which is what `index_spec` needs.
                unsafe { index_spec(i, s, "specs") }
            })
            .collect()
    }
}

/// One spec as the handler takes it, its name copied (lossily as UTF-8; NULL: empty); an
/// unknown kind is `InvalidArgument` naming `what[i]`.
///
/// # Safety
///
/// `s.name` is NULL or follows the C string rule (`ffi_util` module docs).
pub(crate) unsafe fn index_spec(
    i: usize,
    s: &riptide_index_spec_t,
    what: &str,
) -> CResult<IndexSpec> {
    let kind = match s.kind {
        RIPTIDE_INDEX_PRIMARY => IndexKind::Primary,
        RIPTIDE_INDEX_HIDDEN_PK => IndexKind::HiddenPk,
        RIPTIDE_INDEX_SECONDARY => IndexKind::Secondary,
        other => {
            return Err(Error::invalid_argument(format!(
                "{what}[{i}].kind {other} is not an index kind"
            )));
        }
    };
    let name = if s.name.is_null() {
        String::new()
    } else {
        // SAFETY: a non-NULL `name` follows the C string rule (this function's contract).
        let name = unsafe { c_bytes(s.name, "name of an index spec") }?;
        String::from_utf8_lossy(name).into_owned()
    };
    Ok(IndexSpec {
        kind,
        unique: s.unique,
        key_parts: s.key_parts,
        name,
    })
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `handler`
    // and `errmsg` and the handle `db`.
    let (out, db, errmsg) = unsafe {
        (
            Out::new(handler, "handler"),
            arg_ref(db, "db"),
            ErrMsg::new(errmsg),
        )
    };
    // Not counted in `riptide_handler_calls` (so not `hguard`).
    errmsg.guard_status(|| {
        let run = || -> Result<(), HandlerError> {
            let out = out?;
            out.set(std::ptr::null_mut());
            let engine = HandlerEngine::open(db?.shared()?)?;
            out.set(into_handle(riptide_handler_t { engine }));
            Ok(())
        };
        run().map_err(|e| handler_status(e, None))
    })
}

/// Persists the exact auto-increment and row id counters of every open table (a clean
/// shutdown; after a crash the reserved ranges are skipped instead).
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_close(
    handler: *mut riptide_handler_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler` and the
    // out-parameter `errmsg`.
    let (handler, errmsg) = unsafe { (arg_ref(handler, "handler"), ErrMsg::new(errmsg)) };
    hguard(errmsg, || handler?.engine.close())
}

/// Sets the version of the caller's key encoding that every table created from now on
/// records (read back with `riptide_htable_key_format`; default 0): the handler treats keys
/// as bytes, and a caller that changes how it encodes key parts reads each table with the
/// encoding it was created with. `RIPTIDE_INVALID_ARGUMENT` above 127.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_set_key_format(
    handler: *mut riptide_handler_t,
    format: u32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler` and the
    // out-parameter `errmsg`.
    let (handler, errmsg) = unsafe { (arg_ref(handler, "handler"), ErrMsg::new(errmsg)) };
    hguard(errmsg, || {
        // The format is checked before the handle.
        let format = u8::try_from(format)
            .map_err(|_| Error::invalid_argument(format!("key format {format} is above 127")))?;
        handler?.engine.set_key_format(format)
    })
}

/// Frees a handler (its tables and sessions stay usable until freed). NULL is a no-op.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_destroy(handler: *mut riptide_handler_t) {
    // SAFETY: per `# Safety`, `handler` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_handler_open` and never used again.
    unsafe { destroy_handle(handler) }
}

/// Creates table `name` with `n` indexes (`specs[0]` primary or hidden pk, the rest
/// secondary) and the first auto-increment value `autoinc_start` (0: 1). New index ids are
/// never reused; a leftover entry of the same name is dropped with its data.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` is NULL or `name_len`
/// readable bytes; `(specs, n)` is NULL with `n` 0 or `n` readable specs, each `name` NULL
/// or NUL-terminated; `errmsg` is NULL or writable.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name`, the array `specs` and the out-parameter `errmsg`.
    let (handler, name, specs, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            IndexSpecs::new(specs, n),
            ErrMsg::new(errmsg),
        )
    };
    create_table(handler, name, specs, autoinc_start, false, errmsg)
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name`, the array `specs` and the out-parameter `errmsg`.
    let (handler, name, specs, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            IndexSpecs::new(specs, n),
            ErrMsg::new(errmsg),
        )
    };
    create_table(handler, name, specs, autoinc_start, true, errmsg)
}

/// The body of both create calls, over their converted parameters.
fn create_table(
    handler: CResult<&riptide_handler_t>,
    name: CResult<&[u8]>,
    specs: CResult<IndexSpecs<'_>>,
    autoinc_start: u64,
    temporary: bool,
    errmsg: ErrMsg,
) -> riptide_status_t {
    hguard(errmsg, || {
        let (h, name) = (handler?, name?);
        let list = specs?.index_specs()?;
        if temporary {
            h.engine
                .create_temporary_table(name, &list, autoinc_start)?;
        } else {
            h.engine.create_table(name, &list, autoinc_start)?;
        }
        Ok(())
    })
}

/// Drops table `name` (one range delete per index and the dictionary entry, in one batch).
/// `*existed` tells whether it was in the dictionary (may be NULL).
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` is NULL or `name_len`
/// readable bytes; `existed` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_drop_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    existed: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name` and the optional out-parameters `existed` and `errmsg`.
    let (handler, name, existed, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            Out::optional(existed),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name) = (handler?, name?);
        let found = h.engine.drop_table(name)?;
        if let Some(out) = existed {
            out.set(found);
        }
        Ok(())
    })
}

/// Marks table `name` temporary (`temporary` true: the next open of the handler drops it
/// with its rows, as a table made by [`riptide_handler_create_temporary_table`]) or removes
/// the mark (false). The plugin marks the target of an ALTER TABLE copy while it commits the
/// copied rows in pieces, so a crash mid-copy leaves no half-copied table, and unmarks it
/// when the copy is complete. `RIPTIDE_NOT_FOUND` if the table does not exist.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` is NULL or `name_len`
/// readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_mark_temporary(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    temporary: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name` and the out-parameter `errmsg`.
    let (handler, name, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name) = (handler?, name?);
        h.engine.mark_temporary(name, temporary)
    })
}

/// Renames table `from` to `to`: `RIPTIDE_NOT_FOUND` if `from` does not exist,
/// `RIPTIDE_BUSY` if `to` does.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(from, from_len)` and `(to, to_len)` are
/// NULL or their length in readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_rename_table(
    handler: *mut riptide_handler_t,
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // strings `from` and `to` and the out-parameter `errmsg`.
    let (handler, from, to, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(from, from_len, "from"),
            bytes(to, to_len, "to"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, from, to) = (handler?, from?, to?);
        h.engine.rename_table(from, to)
    })
}

/// Empties table `name` (new index ids, old keys range-deleted, auto-increment back to 1).
/// `RIPTIDE_NOT_FOUND` if it does not exist.
///
/// # Safety
///
/// As `riptide_handler_mark_temporary`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_truncate_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name` and the out-parameter `errmsg`.
    let (handler, name, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name) = (handler?, name?);
        h.engine.truncate_table(name)?;
        Ok(())
    })
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
/// As `riptide_handler_mark_temporary`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_wait_prepared(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler`, the byte
    // string `name` and the out-parameter `errmsg`.
    let (handler, name, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (h, name) = (handler?, name?);
        h.engine
            .wait_for_prepared(name, Duration::from_millis(timeout_ms))
    })
}

/// Opens table `name` into `*table`; `RIPTIDE_NOT_FOUND` if the dictionary has no such table.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `(name, name_len)` is NULL or `name_len`
/// readable bytes; `table` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_open_table(
    handler: *mut riptide_handler_t,
    name: *const c_char,
    name_len: usize,
    table: *mut *mut riptide_htable_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `table` and
    // `errmsg`, the handle `handler` and the byte string `name`.
    let (out, handler, name, errmsg) = unsafe {
        (
            Out::new(table, "table"),
            arg_ref(handler, "handler"),
            bytes(name, name_len, "name"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let (h, name) = (handler?, name?);
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
