//! Point writes and reads on a database: put, get, delete, single delete, range delete, and
//! atomic batch writes.

use std::ffi::c_char;

use riptide::ReadOptions;

use crate::batch::riptide_batch_t;
use crate::cf::riptide_cf_t;
use crate::db::{cf_or_default, riptide_db_t};
use crate::ffi_util::{CResult, ErrMsg, Out, arg_mut, arg_opt, arg_ref, bytes};
use crate::memory::malloc_bytes;
use crate::snapshot::riptide_snapshot_t;
use crate::status::riptide_status_t;

/// The out-parameters of a read: `value`, `value_len`, `found`.
pub(crate) struct ValueOut {
    value: Out<*mut c_char>,
    len: Out<usize>,
    found: Out<bool>,
}

impl ValueOut {
    /// Checks the three out-parameters (NULL is `InvalidArgument` naming it); writes nothing.
    ///
    /// # Safety
    ///
    /// Each pointer follows the out-parameter rule (`ffi_util` module docs) for as long as the
    /// returned value lives.
    pub(crate) unsafe fn check(
        value: *mut *mut c_char,
        value_len: *mut usize,
        found: *mut bool,
    ) -> CResult<ValueOut> {
        // SAFETY: `Out::new` needs the out-parameter rule for each pointer while the `Out`
        // lives; this function's contract gives it for as long as the `ValueOut` holding them.
        unsafe {
            Ok(ValueOut {
                value: Out::new(value, "value")?,
                len: Out::new(value_len, "value_len")?,
                found: Out::new(found, "found")?,
            })
        }
    }

    /// Puts the out-parameters in their "not found" state: NULL, 0, false.
    pub(crate) fn clear(&self) {
        self.value.set(std::ptr::null_mut());
        self.len.set(0);
        self.found.set(false);
    }

    /// Hands a read's result to the caller: a `malloc`'d copy of the value, if any.
    pub(crate) fn deliver(&self, result: Option<Vec<u8>>) -> CResult {
        if let Some(v) = result {
            self.value.set(malloc_bytes(&v)?);
            self.len.set(v.len());
            self.found.set(true);
        }
        Ok(())
    }
}

/// Sets `key` to `value` in `cf` (NULL: the default column family). Keys and values are
/// byte strings `(pointer, length)` and may contain NULs; a NULL pointer with length 0 is
/// the empty string.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `cf` is NULL or a live column family handle of
/// this database; every `(pointer, length)` pair is NULL or `length` readable bytes;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_put(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf`, the
    // byte strings `key` and `value` and the out-parameter `errmsg`.
    let (db, cf, key, value, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            bytes(value, value_len, "value"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, key, value) = (db?, key?, value?);
        db.with(|d| d.put_cf(&cf_or_default(d, cf), key, value))
    })
}

/// Reads `key` in `cf` (NULL: the default column family) at `snapshot` (NULL: the latest
/// committed state). If the key exists, `*found` is true and `*value` receives a copy of its
/// value (`*value_len` bytes, never NULL, even when empty) that the caller frees with
/// `riptide_free_value`; otherwise `*found` is false, `*value` NULL and `*value_len` 0.
/// An absent key is not an error.
///
/// # Safety
///
/// As `riptide_put`; `snapshot` is NULL or a live snapshot of this database; `value`,
/// `value_len` and `found` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_get(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    snapshot: *const riptide_snapshot_t,
    key: *const c_char,
    key_len: usize,
    value: *mut *mut c_char,
    value_len: *mut usize,
    found: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `value`,
    // `value_len`, `found` and `errmsg`, the handles `db`, `cf` and `snapshot` and the byte
    // string `key`.
    let (out, db, cf, snapshot, key, errmsg) = unsafe {
        (
            ValueOut::check(value, value_len, found),
            arg_ref(db, "db"),
            arg_opt(cf),
            arg_opt(snapshot),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.clear();
        let (db, key) = (db?, key?);
        let result = db.with(|d| {
            let mut opts = ReadOptions::default();
            if let Some(s) = snapshot {
                opts = opts.snapshot(&s.snap);
            }
            d.get_cf_opt(&cf_or_default(d, cf), key, &opts)
        })?;
        out.deliver(result)
    })
}

/// Deletes `key` from `cf` (NULL: the default column family). Deleting an absent key is not
/// an error.
///
/// # Safety
///
/// As `riptide_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_delete(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf`, the
    // byte string `key` and the out-parameter `errmsg`.
    let (db, cf, key, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, key) = (db?, key?);
        db.with(|d| d.delete_cf(&cf_or_default(d, cf), key))
    })
}

/// Single-deletes `key` from `cf` (NULL: the default column family): a delete that may
/// vanish together with the one put it cancels. Contract: the key was put at most once since
/// it was last deleted; otherwise older values may reappear.
///
/// # Safety
///
/// As `riptide_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_single_delete(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `db` and `cf`, the
    // byte string `key` and the out-parameter `errmsg`.
    let (db, cf, key, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, key) = (db?, key?);
        db.with(|d| d.single_delete_cf(&cf_or_default(d, cf), key))
    })
}

/// Deletes every key `k` with `start <= k < end` from `cf` (NULL: the default column family)
/// with one range tombstone. `start == end` deletes nothing; `start > end` is
/// `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_delete_range(
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
            bytes(start, start_len, "start"),
            bytes(end, end_len, "end"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, start, end) = (db?, start?, end?);
        db.with(|d| d.delete_range_cf(&cf_or_default(d, cf), start, end))
    })
}

/// Applies every write of `batch` atomically (all or nothing, also after a crash). The
/// batch's writes are moved out: on return, success or failure, the batch is empty and may
/// be reused.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `batch` is NULL or a live batch handle not used
/// by another thread during the call; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_write(
    db: *mut riptide_db_t,
    batch: *mut riptide_batch_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db`, the exclusive
    // handle `batch` and the out-parameter `errmsg`.
    let (db, batch, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            arg_mut(batch, "batch"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (db, batch) = (db?, batch?);
        let taken = std::mem::take(&mut batch.batch);
        db.with(|d| d.write(taken))
    })
}
