//! `riptide_txn_iter_t`: a cursor over one column family as a transaction sees it (its own
//! writes over the database at its read point).

use std::ffi::c_char;

use riptide::{ColumnFamily, ReadOptions, Result, Transaction, TxnIterator};

use crate::cf::riptide_cf_t;
use crate::cursor::{CursorHandle, Step, cursor_entry, cursor_valid, seek_cursor, step_cursor};
use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_mut, arg_opt, arg_ref, bytes, destroy_handle, into_handle, opt_bytes,
};
use crate::status::riptide_status_t;
use crate::txn::riptide_txn_t;

/// A transaction iterator (opaque). Made by `riptide_txn_iter_create` (or
/// `riptide_txn_iter_create_locking`), freed by `riptide_txn_iter_destroy` (before its
/// transaction). One thread at a time. It sees writes the transaction makes while it is
/// open; plain scans are not validated or locked.
pub struct riptide_txn_iter_t {
    pub(crate) it: TxnIterator,
}

impl CursorHandle for riptide_txn_iter_t {
    type C = TxnIterator;
    fn cursor(&mut self) -> &mut TxnIterator {
        &mut self.it
    }
    fn cursor_ref(&self) -> &TxnIterator {
        &self.it
    }
}

/// The body of the `riptide_txn_iter_create*` functions, over their converted parameters:
/// clears `*iter`, checks the handles and bounds, makes the iterator with `make` and hands it
/// out.
fn create_txn_iter(
    iter: CResult<Out<*mut riptide_txn_iter_t>>,
    txn: CResult<&riptide_txn_t>,
    cf: Option<&riptide_cf_t>,
    lower: CResult<Option<&[u8]>>,
    upper: CResult<Option<&[u8]>>,
    errmsg: ErrMsg,
    make: impl FnOnce(&Transaction, &ColumnFamily, ReadOptions<'_>) -> Result<TxnIterator>,
) -> riptide_status_t {
    errmsg.guard(|| {
        let out = iter?;
        out.set(std::ptr::null_mut());
        let t = txn?;
        let cf = t.cf(cf);
        let mut opts = ReadOptions::default();
        if let Some(l) = lower? {
            opts = opts.lower_bound(l);
        }
        if let Some(u) = upper? {
            opts = opts.upper_bound(u);
        }
        let it = make(&t.txn, &cf, opts)?;
        out.set(into_handle(riptide_txn_iter_t { it }));
        Ok(())
    })
}

/// Creates an iterator over `cf` (NULL: the default column family) as `txn` sees it, within
/// the optional bounds `lower` (inclusive) and `upper` (exclusive) (NULL: no bound). It
/// starts unpositioned: call a seek function first.
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle; `cf` is NULL or a live column family handle
/// of the transaction's database; each bound is NULL (with length 0) or its length in
/// readable bytes; `iter` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_create(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    lower: *const c_char,
    lower_len: usize,
    upper: *const c_char,
    upper_len: usize,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `iter` and
    // `errmsg`, the handles `txn` and `cf` and the byte strings `lower` and `upper`.
    let (iter, txn, cf, lower, upper, errmsg) = unsafe {
        (
            Out::new(iter, "iter"),
            arg_ref(txn, "txn"),
            arg_opt(cf),
            opt_bytes(lower, lower_len, "lower"),
            opt_bytes(upper, upper_len, "upper"),
            ErrMsg::new(errmsg),
        )
    };
    create_txn_iter(iter, txn, cf, lower, upper, errmsg, |txn, cf, opts| {
        txn.iter(cf, opts)
    })
}

/// Creates a *locking* iterator over `cf` (NULL: the default column family) for `txn`, which
/// must be pessimistic, within the optional bounds as `riptide_txn_iter_create`: it reads
/// the newest committed data merged with the transaction's own writes, locks every key it
/// stops on (`exclusive`, else shared) and, under repeatable read and serializable,
/// gap-locks the range it walks so that other transactions' `riptide_txn_insert` there
/// waits (InnoDB's locking reads). A step that waits too long or would deadlock fails with
/// `RIPTIDE_TIMED_OUT` or `RIPTIDE_DEADLOCK`.
///
/// # Safety
///
/// As `riptide_txn_iter_create`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn riptide_txn_iter_create_locking(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    lower: *const c_char,
    lower_len: usize,
    upper: *const c_char,
    upper_len: usize,
    exclusive: bool,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `iter` and
    // `errmsg`, the handles `txn` and `cf` and the byte strings `lower` and `upper`.
    let (iter, txn, cf, lower, upper, errmsg) = unsafe {
        (
            Out::new(iter, "iter"),
            arg_ref(txn, "txn"),
            arg_opt(cf),
            opt_bytes(lower, lower_len, "lower"),
            opt_bytes(upper, upper_len, "upper"),
            ErrMsg::new(errmsg),
        )
    };
    create_txn_iter(iter, txn, cf, lower, upper, errmsg, |txn, cf, opts| {
        txn.iter_locking(cf, opts, exclusive)
    })
}

/// Frees a transaction iterator. NULL is a no-op.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_destroy(iter: *mut riptide_txn_iter_t) {
    // SAFETY: per `# Safety`, `iter` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_txn_iter_create*` and never used again.
    unsafe { destroy_handle(iter) }
}

/// Positions on the first visible key.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle used by this thread alone; `errmsg`
/// is NULL or writable. The same holds for every function that moves it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_seek_to_first(
    iter: *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::First, errmsg)
}

/// Positions on the last visible key.
///
/// # Safety
///
/// As `riptide_txn_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_seek_to_last(
    iter: *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Last, errmsg)
}

/// Positions on the first visible key >= `target`.
///
/// # Safety
///
/// As `riptide_txn_iter_seek_to_first`; `(target, target_len)` is NULL or `target_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_seek(
    iter: *mut riptide_txn_iter_t,
    target: *const c_char,
    target_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter`, the
    // byte string `target` and the out-parameter `errmsg`.
    let (iter, target, errmsg) = unsafe {
        (
            arg_mut(iter, "iter"),
            bytes(target, target_len, "target"),
            ErrMsg::new(errmsg),
        )
    };
    seek_cursor(iter, target, false, errmsg)
}

/// Positions on the last visible key <= `target`.
///
/// # Safety
///
/// As `riptide_txn_iter_seek`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_seek_for_prev(
    iter: *mut riptide_txn_iter_t,
    target: *const c_char,
    target_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter`, the
    // byte string `target` and the out-parameter `errmsg`.
    let (iter, target, errmsg) = unsafe {
        (
            arg_mut(iter, "iter"),
            bytes(target, target_len, "target"),
            ErrMsg::new(errmsg),
        )
    };
    seek_cursor(iter, target, true, errmsg)
}

/// Moves to the next visible key. Does nothing when not valid.
///
/// # Safety
///
/// As `riptide_txn_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_next(
    iter: *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Next, errmsg)
}

/// Moves to the previous visible key. Does nothing when not valid.
///
/// # Safety
///
/// As `riptide_txn_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_prev(
    iter: *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Prev, errmsg)
}

/// Sets the iterator's stop key `(stop, stop_len)` (NULL with length 0: none): from now on a
/// forward positioning (`seek_to_first`, `seek`, `next`) that would settle on a key >= stop
/// leaves the iterator not valid instead, as at the end of its bounds. A locking iterator
/// does not lock that key under read committed; with gap locks (repeatable read,
/// serializable) it locks it and the gap before it first, as before (InnoDB's next-key lock
/// on the first record past a range). Backward steps ignore it. The bounds given at
/// creation stay.
///
/// # Safety
///
/// As `riptide_txn_iter_seek`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_set_stop(
    iter: *mut riptide_txn_iter_t,
    stop: *const c_char,
    stop_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter`, the
    // byte string `stop` and the out-parameter `errmsg`.
    let (iter, stop, errmsg) = unsafe {
        (
            arg_mut(iter, "iter"),
            opt_bytes(stop, stop_len, "stop"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (iter, stop) = (iter?, stop?);
        iter.it.set_stop(stop);
        Ok(())
    })
}

/// True when positioned on an entry; false for NULL.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not used by another thread during
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_valid(iter: *const riptide_txn_iter_t) -> bool {
    // SAFETY: per `# Safety`, `iter` follows the exclusive handle rule of the ffi_util
    // contract (an iterator is not `Sync`), which includes the handle rule `arg_opt` needs.
    let iter = unsafe { arg_opt(iter) };
    cursor_valid(iter)
}

/// The current key: a pointer valid until the iterator next moves or is destroyed (do not
/// free it), its length in `*key_len`. NULL (length 0) when not valid or for NULL.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not used by another thread during
/// the call; `key_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_key(
    iter: *const riptide_txn_iter_t,
    key_len: *mut usize,
) -> *const c_char {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the optional out-parameter
    // `key_len` and for `iter` as an exclusive handle (an iterator is not `Sync`), which
    // includes the handle rule `arg_opt` needs.
    let (iter, key_len) = unsafe { (arg_opt(iter), Out::optional(key_len)) };
    cursor_entry(iter, key_len, true)
}

/// The current value: as `riptide_txn_iter_key`.
///
/// # Safety
///
/// As `riptide_txn_iter_key`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_value(
    iter: *const riptide_txn_iter_t,
    value_len: *mut usize,
) -> *const c_char {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the optional out-parameter
    // `value_len` and for `iter` as an exclusive handle (an iterator is not `Sync`), which
    // includes the handle rule `arg_opt` needs.
    let (iter, value_len) = unsafe { (arg_opt(iter), Out::optional(value_len)) };
    cursor_entry(iter, value_len, false)
}
