//! `riptide_batch_t`: writes applied atomically by `riptide_write`.

use std::ffi::c_char;

use riptide::WriteBatch;

use crate::cf::riptide_cf_t;
use crate::ffi_util::{
    CResult, ErrMsg, arg_mut, arg_opt, bytes, destroy_handle, guard_value, into_handle, query,
};
use crate::status::riptide_status_t;

/// A write batch (opaque): puts and deletes, possibly across column families, that
/// `riptide_write` applies atomically, in order (a later write to a key wins). Made by
/// `riptide_batch_create`, freed by `riptide_batch_destroy`. One thread at a time.
pub struct riptide_batch_t {
    pub(crate) batch: WriteBatch,
}

/// A new, empty batch. Never NULL except if memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_batch_create() -> *mut riptide_batch_t {
    guard_value(std::ptr::null_mut(), || {
        into_handle(riptide_batch_t {
            batch: WriteBatch::new(),
        })
    })
}

/// Frees a batch. NULL is a no-op.
///
/// # Safety
///
/// `batch` is NULL or a live batch handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_destroy(batch: *mut riptide_batch_t) {
    // SAFETY: per `# Safety`, `batch` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_batch_create` and never used again.
    unsafe { destroy_handle(batch) }
}

/// Applies `f` to the batch behind the converted exclusive handle `batch` under the guard.
fn edit(
    batch: CResult<&mut riptide_batch_t>,
    errmsg: ErrMsg,
    f: impl FnOnce(&mut WriteBatch) -> CResult,
) -> riptide_status_t {
    errmsg.guard(|| f(&mut batch?.batch))
}

/// Adds "set `key` to `value` in `cf`" (NULL `cf`: the default column family).
///
/// # Safety
///
/// `batch` is NULL or a live batch handle not used by another thread during the call; `cf`
/// is NULL or a live column family handle; every `(pointer, length)` pair is NULL or
/// `length` readable bytes; `errmsg` is NULL or writable. The same holds for every
/// `riptide_batch_*` edit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_put(
    batch: *mut riptide_batch_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `batch`
    // (batches are one thread at a time), the handle `cf`, the byte strings `key` and `value`
    // and the out-parameter `errmsg`.
    let (batch, cf, key, value, errmsg) = unsafe {
        (
            arg_mut(batch, "batch"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            bytes(value, value_len, "value"),
            ErrMsg::new(errmsg),
        )
    };
    edit(batch, errmsg, |b| {
        let (key, value) = (key?, value?);
        match cf {
            Some(cf) => b.put_cf(&cf.cf, key, value),
            None => b.put(key, value),
        };
        Ok(())
    })
}

/// Adds "delete `key` from `cf`" (NULL `cf`: the default column family).
///
/// # Safety
///
/// As `riptide_batch_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_delete(
    batch: *mut riptide_batch_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `batch`,
    // the handle `cf`, the byte string `key` and the out-parameter `errmsg`.
    let (batch, cf, key, errmsg) = unsafe {
        (
            arg_mut(batch, "batch"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    edit(batch, errmsg, |b| {
        let key = key?;
        match cf {
            Some(cf) => b.delete_cf(&cf.cf, key),
            None => b.delete(key),
        };
        Ok(())
    })
}

/// Adds "single-delete `key` from `cf`" (see `riptide_single_delete`).
///
/// # Safety
///
/// As `riptide_batch_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_single_delete(
    batch: *mut riptide_batch_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `batch`,
    // the handle `cf`, the byte string `key` and the out-parameter `errmsg`.
    let (batch, cf, key, errmsg) = unsafe {
        (
            arg_mut(batch, "batch"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    edit(batch, errmsg, |b| {
        let key = key?;
        match cf {
            Some(cf) => b.single_delete_cf(&cf.cf, key),
            None => b.single_delete(key),
        };
        Ok(())
    })
}

/// Adds "delete every key `k` with `start <= k < end` from `cf`". An inverted range makes
/// `riptide_write` of the batch fail with `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_batch_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_delete_range(
    batch: *mut riptide_batch_t,
    cf: *const riptide_cf_t,
    start: *const c_char,
    start_len: usize,
    end: *const c_char,
    end_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `batch`,
    // the handle `cf`, the byte strings `start` and `end` and the out-parameter `errmsg`.
    let (batch, cf, start, end, errmsg) = unsafe {
        (
            arg_mut(batch, "batch"),
            arg_opt(cf),
            bytes(start, start_len, "start"),
            bytes(end, end_len, "end"),
            ErrMsg::new(errmsg),
        )
    };
    edit(batch, errmsg, |b| {
        let (start, end) = (start?, end?);
        match cf {
            Some(cf) => b.delete_range_cf(&cf.cf, start, end),
            None => b.delete_range(start, end),
        };
        Ok(())
    })
}

/// Removes every write from the batch.
///
/// # Safety
///
/// `batch` is NULL or a live batch handle not used by another thread during the call;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_clear(
    batch: *mut riptide_batch_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `batch`
    // and the out-parameter `errmsg`.
    let (batch, errmsg) = unsafe { (arg_mut(batch, "batch"), ErrMsg::new(errmsg)) };
    edit(batch, errmsg, |b| {
        b.clear();
        Ok(())
    })
}

/// Number of writes in the batch (range deletes that delete nothing are not counted); 0 for
/// NULL.
///
/// # Safety
///
/// `batch` is NULL or a live batch handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_count(batch: *const riptide_batch_t) -> usize {
    // SAFETY: per `# Safety`, `batch` follows the handle rule of the ffi_util contract.
    unsafe { query(batch, 0, |b| b.batch.len()) }
}

/// Encoded size of the batch in bytes (what its WAL record will hold); 0 for NULL.
///
/// # Safety
///
/// `batch` is NULL or a live batch handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_batch_size_in_bytes(batch: *const riptide_batch_t) -> usize {
    // SAFETY: per `# Safety`, `batch` follows the handle rule of the ffi_util contract.
    unsafe { query(batch, 0, |b| b.batch.size_in_bytes()) }
}
