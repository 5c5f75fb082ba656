//! What the handler files of the C ABI share: the error mapping of handler results
//! (duplicate keys name their index), the guard that runs a handler body, secondary key
//! arrays and row lock modes.

use std::ffi::c_char;

use riptide::Error;
use riptide_handler::{HandlerError, RowLock, SecondaryKey};

use crate::ffi_util::{CResult, Out, bytes, guard_status};
use crate::handler_session::{
    RIPTIDE_ROW_LOCK_EXCLUSIVE, RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED, RIPTIDE_ROW_LOCK_NONE,
    RIPTIDE_ROW_LOCK_SHARED, RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED, riptide_hkey_t,
};
use crate::status::riptide_status_t;

/// Maps a handler error to a status and message (`RIPTIDE_DUPLICATE_KEY` for duplicates,
/// with the index written to `dup`).
pub(crate) fn handler_status(
    e: HandlerError,
    dup: Option<&Out<usize>>,
) -> (riptide_status_t, String) {
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

/// Runs a body returning handler results under the panic guard, and counts the call
/// (`riptide_handler_calls`).
///
/// # Safety
///
/// `errmsg` is NULL or writable.
pub(crate) unsafe fn hguard(
    errmsg: *mut *mut c_char,
    body: impl FnOnce() -> Result<(), HandlerError>,
) -> riptide_status_t {
    crate::calls::count();
    // SAFETY: `errmsg` is NULL or writable, per this function's contract.
    unsafe { guard_status(errmsg, || body().map_err(|e| handler_status(e, None))) }
}

/// The secondary keys `(keys, n)`.
///
/// # Safety
///
/// `keys` is NULL (with `n` 0) or points to `n` readable `riptide_hkey_t` whose byte strings
/// are readable and unchanged during `'a`.
pub(crate) unsafe fn sec_keys<'a>(
    keys: *const riptide_hkey_t,
    n: usize,
) -> CResult<Vec<SecondaryKey<'a>>> {
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
            // SAFETY: per this function's contract, each key's bytes are readable and
            // unchanged during `'a`.
            let key = unsafe { bytes(k.data, k.len, "keys[].data") }?;
            Ok(SecondaryKey {
                key,
                has_null: k.has_null,
            })
        })
        .collect()
}

/// The `RowLock` of a `RIPTIDE_ROW_LOCK_*` value, and whether it is a `SKIP LOCKED` mode.
pub(crate) fn row_lock(lock: i32) -> Result<(RowLock, bool), HandlerError> {
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
