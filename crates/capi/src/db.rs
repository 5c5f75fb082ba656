//! `riptide_db_t`: opening, closing and freeing a database, flush, compaction, and the
//! library version.

use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;
use riptide::{ColumnFamily, Db, Error, Options};

use crate::cf::riptide_cf_t;
use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_opt, arg_ref, c_bytes, c_str, destroy_handle, into_handle, opt_bytes,
};
use crate::options::riptide_options_t;
use crate::status::riptide_status_t;

/// An open database (opaque). Made by `riptide_db_open`; closed by `riptide_db_close`
/// (optional) and freed by `riptide_db_destroy`.
///
/// Thread safety: a database handle may be used from any number of threads at once (every
/// function taking `riptide_db_t *` is thread-safe), except `riptide_db_destroy`, which must
/// be the last call on it. `riptide_db_close` waits for calls in progress on other threads.
pub struct riptide_db_t {
    /// `None` once closed; calls then fail with `Closed`. Shared with a handler engine
    /// (`riptide_handler_open`), which keeps the database open until it is freed.
    db: RwLock<Option<Arc<Db>>>,
}

impl riptide_db_t {
    /// Runs `f` on the open database, or fails with `Closed` if it was closed.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Db) -> CResult<R>) -> CResult<R> {
        let guard = self.db.read();
        match guard.as_ref() {
            Some(db) => f(db),
            None => Err(Error::closed(
                "the database handle was closed by riptide_db_close",
            )),
        }
    }

    /// A shared reference to the open database, or `Closed`.
    pub(crate) fn shared(&self) -> CResult<Arc<Db>> {
        match self.db.read().as_ref() {
            Some(db) => Ok(Arc::clone(db)),
            None => Err(Error::closed(
                "the database handle was closed by riptide_db_close",
            )),
        }
    }
}

/// The column family behind an optional handle: NULL is the default column family.
pub(crate) fn cf_or_default(db: &Db, cf: Option<&riptide_cf_t>) -> ColumnFamily {
    match cf {
        Some(h) => h.cf.clone(),
        None => db.default_cf(),
    }
}

/// The bytes of a path as the platform's path type.
pub(crate) fn path_from_bytes(bytes: &[u8]) -> CResult<PathBuf> {
    if bytes.is_empty() {
        return Err(Error::invalid_argument("parameter `path` is empty"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|e| Error::invalid_argument(format!("parameter `path` is not UTF-8: {e}")))
    }
}

/// Opens (or, with create-if-missing, creates) the database in directory `path` (a
/// NUL-terminated string) with `options` (NULL for the defaults; the options are copied).
/// On success `*db` receives the handle; on failure it is set to NULL. `RIPTIDE_BUSY` if
/// another handle or process has the database open.
///
/// # Safety
///
/// `path` is NULL or NUL-terminated; `options` is NULL or a live options handle; `db` is
/// NULL or writable; `errmsg` is NULL or writable. This last rule holds for every function
/// with an `errmsg` parameter: on success `*errmsg` is set to NULL, on failure to a message
/// to free with `riptide_free` (a previous value is overwritten, not freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_open(
    path: *const c_char,
    options: *const riptide_options_t,
    db: *mut *mut riptide_db_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `db` and
    // `errmsg`, the C string `path` and the handle `options`.
    let (out, path, options, errmsg) = unsafe {
        (
            Out::new(db, "db"),
            c_bytes(path, "path"),
            arg_opt(options),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let path = path_from_bytes(path?)?;
        let opts = options.map_or_else(Options::default, |o| o.opts.clone());
        let opened = Db::open(&path, opts)?;
        out.set(into_handle(riptide_db_t {
            db: RwLock::new(Some(Arc::new(opened))),
        }));
        Ok(())
    })
}

/// Closes the database: waits for calls in progress on other threads, stops background
/// work, syncs the WAL and releases the directory lock (if a handler engine made with
/// `riptide_handler_open` is still alive, that happens when it is freed: free it first). The handle stays allocated: later
/// calls on it fail with `RIPTIDE_CLOSED`, and closing again is `RIPTIDE_OK`. Free it with
/// `riptide_db_destroy`. Transactions, iterators, snapshots and column family handles made
/// from it stay safe to use and free, but their operations may fail with `RIPTIDE_CLOSED`.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_close(
    db: *mut riptide_db_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameter `errmsg`.
    let (db, errmsg) = unsafe { (arg_ref(db, "db"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| {
        let taken = db?.db.write().take();
        match taken.map(Arc::try_unwrap) {
            Some(Ok(open)) => open.close(),
            // A handler engine still shares it: it closes when that is freed.
            Some(Err(shared)) => {
                drop(shared);
                Ok(())
            }
            None => Ok(()),
        }
    })
}

/// Frees a database handle, closing it first if `riptide_db_close` was not called (an error
/// while closing is then only logged). NULL is a no-op.
///
/// # Safety
///
/// `db` is NULL or a live database handle that no other thread is using and that is not
/// used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_destroy(db: *mut riptide_db_t) {
    // SAFETY: per `# Safety`, `db` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_db_open`, used by no other thread and never used again.
    unsafe { destroy_handle(db) }
}

/// Sets option `name` of the open database to the value `value` reads as (the text forms of
/// `riptide_options_set_by_name`). Only options flagged `RIPTIDE_OPTION_DYNAMIC` in
/// `riptide_option_at` change while the database is open (compaction triggers and sizes,
/// back-pressure limits, the format of tables written from now on, the write-set limit);
/// they apply from their next use. Another option is `RIPTIDE_NOT_SUPPORTED`; an unknown
/// name, a value outside the option's bounds or one the engine could not run with
/// (`l0_compaction_trigger` above `l0_stop_trigger`) is `RIPTIDE_INVALID_ARGUMENT`. On any
/// error nothing changes. A change lasts until the database is closed.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `name` and `value` are NULL or NUL-terminated
/// strings; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_set_option(
    db: *mut riptide_db_t,
    name: *const c_char,
    value: *const c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db`, the strings
    // `name` and `value`, and the out-parameter `errmsg`.
    let (db, name, value, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            c_str(name, "name"),
            c_str(value, "value"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (name, value) = (name?, value?);
        db?.with(|db| db.set_option(name, value))
    })
}

/// Makes every write acknowledged so far durable (`fdatasync` of the current WAL segment):
/// what commits made without waiting for a sync (`riptide_hsession_set_commit_sync`, a sync
/// mode other than full) wrote. MariaDB's binary log asks for it
/// (`commit_checkpoint_request`) before it forgets a log file's transactions. An I/O error
/// makes the database read-only (`RIPTIDE_IO`, then `RIPTIDE_CLOSED`).
///
/// # Safety
///
/// `db` is NULL or a live database handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_sync_wal(
    db: *mut riptide_db_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameter `errmsg`.
    let (db, errmsg) = unsafe { (arg_ref(db, "db"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| db?.with(Db::sync_wal))
}

/// Flushes every column family's memtable to a table file and waits until done.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_flush(
    db: *mut riptide_db_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameter `errmsg`.
    let (db, errmsg) = unsafe { (arg_ref(db, "db"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| db?.with(Db::flush))
}

/// Flushes `cf` (NULL: the default column family) and compacts the key range `[start, end]`
/// down to the last level, dropping what no snapshot needs (RocksDB `CompactRange`). Both
/// bounds NULL (with length 0) compacts everything; exactly one NULL bound is
/// `RIPTIDE_INVALID_ARGUMENT`. Runs in the calling thread.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `cf` is NULL or a live column family handle of
/// this database; each bound is NULL or points to its length in readable bytes; `errmsg` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_compact_range(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    start: *const c_char,
    start_len: usize,
    end: *const c_char,
    end_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf`, the
    // byte strings `start` and `end` and the out-parameter `errmsg`.
    let (db, cf, start, end, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            arg_opt(cf),
            opt_bytes(start, start_len, "start"),
            opt_bytes(end, end_len, "end"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, start, end) = (db?, start?, end?);
        let range = match (start, end) {
            (Some(s), Some(e)) => Some((s, e)),
            (None, None) => None,
            _ => {
                return Err(Error::invalid_argument(
                    "compact_range needs both bounds or neither (`start` and `end`)",
                ));
            }
        };
        db.with(|d| d.compact_range(&cf_or_default(d, cf), range))
    })
}

/// Stores in `*seqno` the sequence number of the last write that is visible.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `seqno` is NULL or writable; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_latest_seqno(
    db: *mut riptide_db_t,
    seqno: *mut u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `seqno` and
    // `errmsg` and the handle `db`.
    let (out, db, errmsg) = unsafe {
        (
            Out::new(seqno, "seqno"),
            arg_ref(db, "db"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(0);
        let n = db?.with(|d| Ok(d.latest_seqno()))?;
        out.set(n);
        Ok(())
    })
}

/// Version of the C ABI described by this header: bumped on any incompatible change.
/// Compare with `riptide_abi_version()` at run time.
pub const RIPTIDE_ABI_VERSION: u32 = 2;

/// The library's version (`"0.1.0"`...), a static NUL-terminated string: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The C ABI version the library was built with (`RIPTIDE_ABI_VERSION` of its header).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_abi_version() -> u32 {
    RIPTIDE_ABI_VERSION
}

/// The largest key plus value one write may carry (`riptide::MAX_KEY_VALUE_LEN`, 1 GiB less
/// 8 bytes): a larger put is refused with `RIPTIDE_INVALID_ARGUMENT` when it is made.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_max_key_value_len() -> usize {
    riptide::MAX_KEY_VALUE_LEN
}
