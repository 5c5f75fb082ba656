//! What the handler files of the C ABI share: the error mapping of handler results
//! (duplicate keys name their index), the guard that runs and counts a handler body, the
//! conversion of secondary key arrays and row lock modes.

use riptide::Error;
use riptide_handler::{HandlerError, RowLock, SecondaryKey};

use crate::ffi_util::{CResult, ErrMsg, Out, bytes};
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

/// Runs a body returning handler results under the panic guard of `errmsg`, and counts the
/// call (`riptide_handler_calls`).
pub(crate) fn hguard(
    errmsg: ErrMsg,
    body: impl FnOnce() -> Result<(), HandlerError>,
) -> riptide_status_t {
    hguard_dup(errmsg, None, body)
}

/// As [`hguard`], for a row write: a duplicate key also writes its index to `dup` (the
/// optional out-parameter `dup_index`).
pub(crate) fn hguard_dup(
    errmsg: ErrMsg,
    dup: Option<Out<usize>>,
    body: impl FnOnce() -> Result<(), HandlerError>,
) -> riptide_status_t {
    crate::calls::count();
    errmsg.guard_status(|| body().map_err(|e| handler_status(e, dup.as_ref())))
}

/// A converted array parameter of secondary keys `(keys, n)`: the `riptide_hkey_t` entries,
/// each of whose byte strings `(data, len)` follows the byte string rule (`ffi_util` module
/// docs) during `'a`.
#[derive(Clone, Copy)]
pub(crate) struct HKeys<'a>(&'a [riptide_hkey_t]);

impl<'a> HKeys<'a> {
    /// Checks the array `(keys, n)`: NULL with a nonzero count is `InvalidArgument`; with
    /// `n` 0 the pointer is not read. Reads no key bytes yet ([`HKeys::secondary_keys`]).
    ///
    /// # Safety
    ///
    /// `(keys, n)` follows the array rule (`ffi_util` module docs) during `'a`: NULL with
    /// `n` 0, or `n` readable `riptide_hkey_t` that nothing writes, each `(data, len)`
    /// following the byte string rule.
    pub(crate) unsafe fn new(keys: *const riptide_hkey_t, n: usize) -> CResult<HKeys<'a>> {
        if n == 0 {
            return Ok(HKeys(&[]));
        }
        if keys.is_null() {
            return Err(Error::invalid_argument(format!(
                "parameter `keys` is NULL but its count is {n}"
            )));
        }
        // SAFETY: `keys` is not NULL, so by the array rule (this function's contract) it
        // points to `n` readable `riptide_hkey_t` (aligned and initialised) that nothing
        // writes during `'a`; being readable memory, they span at most `isize::MAX` bytes.
        Ok(HKeys(unsafe { std::slice::from_raw_parts(keys, n) }))
    }

    /// The keys as the handler takes them; a key with NULL data and a nonzero length is
    /// `InvalidArgument` (the first such key in order).
    pub(crate) fn secondary_keys(self) -> CResult<Vec<SecondaryKey<'a>>> {
        self.0
            .iter()
            .map(|k| {
                // SAFETY: `HKeys::new` required each key's `(data, len)` to follow the byte
                // string rule during `'a`, which is what `bytes` needs.
                let key = unsafe { bytes(k.data, k.len, "keys[].data") }?;
                Ok(SecondaryKey {
                    key,
                    has_null: k.has_null,
                })
            })
            .collect()
    }
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
