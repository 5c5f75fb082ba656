//! `riptide_txn_iter_t`: a cursor over one column family as a transaction sees it (its own
//! writes over the database at its read point).

use std::ffi::c_char;

use riptide::{ColumnFamily, ReadOptions, Result, Transaction, TxnIterator};

use crate::cf::riptide_cf_t;
use crate::cursor::{CursorHandle, Step, cursor_entry, cursor_valid, seek_cursor, step_cursor};
use crate::ffi_util::{
    Out, arg_mut, arg_opt, arg_ref, destroy_handle, guard, into_handle, opt_bytes,
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

/// The body of the `riptide_txn_iter_create*` functions: checks the handles and bounds,
/// clears `*iter`, makes the iterator with `make` and hands it out.
///
/// # Safety
///
/// As `riptide_txn_iter_create`.
#[allow(clippy::too_many_arguments)]
unsafe fn create_txn_iter(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    lower: *const c_char,
    lower_len: usize,
    upper: *const c_char,
    upper_len: usize,
    iter: *mut *mut riptide_txn_iter_t,
    errmsg: *mut *mut c_char,
    make: impl FnOnce(&Transaction, &ColumnFamily, ReadOptions<'_>) -> Result<TxnIterator>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(iter, "iter")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let t = arg_ref(txn, "txn")?;
            // SAFETY: forwarded contract.
            let cf = t.cf(arg_opt(cf));
            let mut opts = ReadOptions::default();
            // SAFETY: forwarded contract.
            if let Some(l) = opt_bytes(lower, lower_len, "lower")? {
                opts = opts.lower_bound(l);
            }
            // SAFETY: forwarded contract.
            if let Some(u) = opt_bytes(upper, upper_len, "upper")? {
                opts = opts.upper_bound(u);
            }
            let it = make(&t.txn, &cf, opts)?;
            out.set(into_handle(riptide_txn_iter_t { it }));
            Ok(())
        })
    }
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
    // SAFETY: forwarded contract.
    unsafe {
        create_txn_iter(
            txn,
            cf,
            lower,
            lower_len,
            upper,
            upper_len,
            iter,
            errmsg,
            |txn, cf, opts| txn.iter(cf, opts),
        )
    }
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
    // SAFETY: forwarded contract.
    unsafe {
        create_txn_iter(
            txn,
            cf,
            lower,
            lower_len,
            upper,
            upper_len,
            iter,
            errmsg,
            |txn, cf, opts| txn.iter_locking(cf, opts, exclusive),
        )
    }
}

/// Frees a transaction iterator. NULL is a no-op.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_destroy(iter: *mut riptide_txn_iter_t) {
    // SAFETY: forwarded contract.
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
    // SAFETY: forwarded contract.
    unsafe { step_cursor(iter, Step::First, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe { step_cursor(iter, Step::Last, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe { seek_cursor(iter, target, target_len, false, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe { seek_cursor(iter, target, target_len, true, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe { step_cursor(iter, Step::Next, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe { step_cursor(iter, Step::Prev, errmsg) }
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
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let it = &mut arg_mut(iter, "iter")?.it;
            // SAFETY: forwarded contract.
            let stop = opt_bytes(stop, stop_len, "stop")?;
            it.set_stop(stop);
            Ok(())
        })
    }
}

/// True when positioned on an entry; false for NULL.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not being moved by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_valid(iter: *const riptide_txn_iter_t) -> bool {
    // SAFETY: forwarded contract.
    unsafe { cursor_valid(iter) }
}

/// The current key: a pointer valid until the iterator next moves or is destroyed (do not
/// free it), its length in `*key_len`. NULL (length 0) when not valid or for NULL.
///
/// # Safety
///
/// `iter` is NULL or a live transaction iterator handle not being moved by another thread;
/// `key_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_iter_key(
    iter: *const riptide_txn_iter_t,
    key_len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { cursor_entry(iter, key_len, true) }
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
    // SAFETY: forwarded contract.
    unsafe { cursor_entry(iter, value_len, false) }
}
