//! `riptide_txn_options_t`: isolation level, concurrency control, lock timeout and snapshot
//! timing of a transaction.

use std::ffi::c_char;
use std::time::Duration;

use riptide::{Concurrency, Error, IsolationLevel, TransactionOptions};

use crate::ffi_util::{CResult, ErrMsg, arg_mut, destroy_handle, guard_value, into_handle};
use crate::status::riptide_status_t;

/// Transaction options (opaque). Made by `riptide_txn_options_create`, freed by
/// `riptide_txn_options_destroy`; `riptide_txn_begin` copies them. One thread at a time.
pub struct riptide_txn_options_t {
    pub(crate) opts: TransactionOptions,
}

/// Isolation: each read sees the newest committed data.
pub const RIPTIDE_ISOLATION_READ_COMMITTED: i32 = 0;
/// Isolation: all reads see one snapshot (snapshot isolation). The default.
pub const RIPTIDE_ISOLATION_REPEATABLE_READ: i32 = 1;
/// Isolation: snapshot reads, and every key read is validated or share-locked.
pub const RIPTIDE_ISOLATION_SERIALIZABLE: i32 = 2;

/// Concurrency: validate at commit; `RIPTIDE_CONFLICT` if a tracked key changed.
pub const RIPTIDE_CONCURRENCY_OPTIMISTIC: i32 = 0;
/// Concurrency: lock rows as they are written or read for update. The default.
pub const RIPTIDE_CONCURRENCY_PESSIMISTIC: i32 = 1;

/// New transaction options with every default (repeatable read, pessimistic, 50 s lock
/// timeout, snapshot at first operation). Never NULL except if memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn riptide_txn_options_create() -> *mut riptide_txn_options_t {
    guard_value(std::ptr::null_mut(), || {
        into_handle(riptide_txn_options_t {
            opts: TransactionOptions::default(),
        })
    })
}

/// Frees transaction options. NULL is a no-op.
///
/// # Safety
///
/// `options` is NULL or a live handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_options_destroy(options: *mut riptide_txn_options_t) {
    // SAFETY: per `# Safety`, `options` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_txn_options_create` and never used again.
    unsafe { destroy_handle(options) }
}

/// Applies `f` to the options behind the converted exclusive handle `options` under the
/// guard.
fn set(
    options: CResult<&mut riptide_txn_options_t>,
    errmsg: ErrMsg,
    f: impl FnOnce(TransactionOptions) -> CResult<TransactionOptions>,
) -> riptide_status_t {
    errmsg.guard(|| {
        let h = options?;
        h.opts = f(std::mem::take(&mut h.opts))?;
        Ok(())
    })
}

/// The isolation level: one of the `RIPTIDE_ISOLATION_*` constants. Default repeatable
/// read. An unknown value is `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `options` is NULL or a live handle not used by another thread during the call; `errmsg`
/// is NULL or writable. The same holds for every `riptide_txn_options_set_*` function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_options_set_isolation(
    options: *mut riptide_txn_options_t,
    isolation: i32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `options`
    // and the out-parameter `errmsg`.
    let (options, errmsg) = unsafe { (arg_mut(options, "options"), ErrMsg::new(errmsg)) };
    set(options, errmsg, |o| {
        let level = match isolation {
            RIPTIDE_ISOLATION_READ_COMMITTED => IsolationLevel::ReadCommitted,
            RIPTIDE_ISOLATION_REPEATABLE_READ => IsolationLevel::RepeatableRead,
            RIPTIDE_ISOLATION_SERIALIZABLE => IsolationLevel::Serializable,
            other => {
                return Err(Error::invalid_argument(format!(
                    "unknown isolation level {other}"
                )));
            }
        };
        Ok(o.isolation(level))
    })
}

/// Optimistic or pessimistic: one of the `RIPTIDE_CONCURRENCY_*` constants. Default
/// pessimistic. An unknown value is `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// As `riptide_txn_options_set_isolation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_options_set_concurrency(
    options: *mut riptide_txn_options_t,
    concurrency: i32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `options`
    // and the out-parameter `errmsg`.
    let (options, errmsg) = unsafe { (arg_mut(options, "options"), ErrMsg::new(errmsg)) };
    set(options, errmsg, |o| {
        let c = match concurrency {
            RIPTIDE_CONCURRENCY_OPTIMISTIC => Concurrency::Optimistic,
            RIPTIDE_CONCURRENCY_PESSIMISTIC => Concurrency::Pessimistic,
            other => {
                return Err(Error::invalid_argument(format!(
                    "unknown concurrency {other}"
                )));
            }
        };
        Ok(o.concurrency(c))
    })
}

/// How long a row-lock wait may last before it fails with `RIPTIDE_TIMED_OUT`, in
/// milliseconds; 0 fails at once if the lock is held. Default 50,000 (InnoDB's
/// `innodb_lock_wait_timeout`).
///
/// # Safety
///
/// As `riptide_txn_options_set_isolation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_options_set_lock_timeout_ms(
    options: *mut riptide_txn_options_t,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `options`
    // and the out-parameter `errmsg`.
    let (options, errmsg) = unsafe { (arg_mut(options, "options"), ErrMsg::new(errmsg)) };
    set(options, errmsg, |o| {
        Ok(o.lock_timeout(Duration::from_millis(timeout_ms)))
    })
}

/// Take the snapshot when the transaction begins instead of at its first operation (`START
/// TRANSACTION WITH CONSISTENT SNAPSHOT`). Default false.
///
/// # Safety
///
/// As `riptide_txn_options_set_isolation`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_options_set_snapshot_at_begin(
    options: *mut riptide_txn_options_t,
    value: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `options`
    // and the out-parameter `errmsg`.
    let (options, errmsg) = unsafe { (arg_mut(options, "options"), ErrMsg::new(errmsg)) };
    set(options, errmsg, |o| Ok(o.snapshot_at_begin(value)))
}
