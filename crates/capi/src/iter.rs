//! `riptide_iter_t`: a cursor over one column family of a database, in key order, in both
//! directions, within optional bounds, at a snapshot or the latest state.

use std::ffi::c_char;

use riptide::{DbIterator, ReadOptions};

use crate::cf::riptide_cf_t;
use crate::cursor::{CursorHandle, Step, cursor_entry, cursor_valid, seek_cursor, step_cursor};
use crate::db::{cf_or_default, riptide_db_t};
use crate::ffi_util::{
    ErrMsg, Out, arg_mut, arg_opt, arg_ref, bytes, destroy_handle, into_handle, opt_bytes,
};
use crate::snapshot::riptide_snapshot_t;
use crate::status::riptide_status_t;

/// A database iterator (opaque). Made by `riptide_iter_create`, freed by
/// `riptide_iter_destroy`. Use it from one thread at a time. It holds the data it reads, so
/// it stays consistent while writes, flushes and compactions go on.
pub struct riptide_iter_t {
    it: DbIterator,
}

impl CursorHandle for riptide_iter_t {
    type C = DbIterator;
    fn cursor(&mut self) -> &mut DbIterator {
        &mut self.it
    }
    fn cursor_ref(&self) -> &DbIterator {
        &self.it
    }
}

/// Creates an iterator over `cf` (NULL: the default column family) at `snapshot` (NULL: the
/// latest committed state), never returning keys below `lower` (inclusive; NULL: no bound)
/// or at or above `upper` (exclusive; NULL: no bound). It starts unpositioned: call a seek
/// function first.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `cf` and `snapshot` are NULL or live handles of
/// this database; each bound is NULL (with length 0) or its length in readable bytes;
/// `iter` is NULL or writable; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_create(
    db: *mut riptide_db_t,
    cf: *const riptide_cf_t,
    snapshot: *const riptide_snapshot_t,
    lower: *const c_char,
    lower_len: usize,
    upper: *const c_char,
    upper_len: usize,
    iter: *mut *mut riptide_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `iter` and
    // `errmsg`, the handles `db`, `cf` and `snapshot` and the byte strings `lower` and `upper`.
    let (out, db, cf, snapshot, lower, upper, errmsg) = unsafe {
        (
            Out::new(iter, "iter"),
            arg_ref(db, "db"),
            arg_opt(cf),
            arg_opt(snapshot),
            opt_bytes(lower, lower_len, "lower"),
            opt_bytes(upper, upper_len, "upper"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let (db, lower, upper) = (db?, lower?, upper?);
        let it = db.with(|d| {
            let mut opts = ReadOptions::default();
            if let Some(s) = snapshot {
                opts = opts.snapshot(&s.snap);
            }
            if let Some(l) = lower {
                opts = opts.lower_bound(l);
            }
            if let Some(u) = upper {
                opts = opts.upper_bound(u);
            }
            d.iter_cf(&cf_or_default(d, cf), opts)
        })?;
        out.set(into_handle(riptide_iter_t { it }));
        Ok(())
    })
}

/// Frees an iterator. NULL is a no-op.
///
/// # Safety
///
/// `iter` is NULL or a live iterator handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_destroy(iter: *mut riptide_iter_t) {
    // SAFETY: per `# Safety`, `iter` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_iter_create` and never used again.
    unsafe { destroy_handle(iter) }
}

/// Positions on the first key (at or above the lower bound).
///
/// # Safety
///
/// `iter` is NULL or a live iterator handle used by this thread alone; `errmsg` is NULL or
/// writable. The same holds for every function that moves an iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_seek_to_first(
    iter: *mut riptide_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::First, errmsg)
}

/// Positions on the last key (below the upper bound).
///
/// # Safety
///
/// As `riptide_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_seek_to_last(
    iter: *mut riptide_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Last, errmsg)
}

/// Positions on the first key >= `target` (clamped to the bounds).
///
/// # Safety
///
/// As `riptide_iter_seek_to_first`; `(target, target_len)` is NULL or `target_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_seek(
    iter: *mut riptide_iter_t,
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

/// Tells the iterator that the forward scans after its next seeks end before `limit`
/// (exclusive; NULL: not known), so that a table reads the blocks of the range up to there
/// in one read (at most 32 KiB) when the first one is not cached. A hint about cost only:
/// `riptide_iter_next` still goes on past it. Give only an end the scan is expected to
/// reach (a range's end); backward moves ignore it.
///
/// # Safety
///
/// As `riptide_iter_seek_to_first`; `(limit, limit_len)` is NULL (with length 0) or
/// `limit_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_set_readahead_limit(
    iter: *mut riptide_iter_t,
    limit: *const c_char,
    limit_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter`, the
    // byte string `limit` and the out-parameter `errmsg`.
    let (iter, limit, errmsg) = unsafe {
        (
            arg_mut(iter, "iter"),
            opt_bytes(limit, limit_len, "limit"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (iter, limit) = (iter?, limit?);
        iter.it.set_readahead_limit(limit);
        Ok(())
    })
}

/// Positions on the last key <= `target` (clamped to the bounds).
///
/// # Safety
///
/// As `riptide_iter_seek`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_seek_for_prev(
    iter: *mut riptide_iter_t,
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

/// Moves to the next key. Does nothing when not valid.
///
/// # Safety
///
/// As `riptide_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_next(
    iter: *mut riptide_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Next, errmsg)
}

/// Moves to the previous key. Does nothing when not valid.
///
/// # Safety
///
/// As `riptide_iter_seek_to_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_prev(
    iter: *mut riptide_iter_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `iter` and
    // the out-parameter `errmsg`.
    let (iter, errmsg) = unsafe { (arg_mut(iter, "iter"), ErrMsg::new(errmsg)) };
    step_cursor(iter, Step::Prev, errmsg)
}

/// True when positioned on an entry; false for NULL.
///
/// # Safety
///
/// `iter` is NULL or a live iterator handle not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_valid(iter: *const riptide_iter_t) -> bool {
    // SAFETY: per `# Safety`, `iter` follows the exclusive handle rule of the ffi_util
    // contract (an iterator is not `Sync`), which includes the handle rule `arg_opt` needs.
    let iter = unsafe { arg_opt(iter) };
    cursor_valid(iter)
}

/// The current key: a pointer valid until the iterator next moves or is destroyed (do not
/// free it), its length in `*key_len`. NULL (length 0) when not valid or for a NULL handle.
///
/// # Safety
///
/// `iter` is NULL or a live iterator handle not used by another thread during the call;
/// `key_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_key(
    iter: *const riptide_iter_t,
    key_len: *mut usize,
) -> *const c_char {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the optional out-parameter
    // `key_len` and for `iter` as an exclusive handle (an iterator is not `Sync`), which
    // includes the handle rule `arg_opt` needs.
    let (iter, key_len) = unsafe { (arg_opt(iter), Out::optional(key_len)) };
    cursor_entry(iter, key_len, true)
}

/// The current value: as `riptide_iter_key`.
///
/// # Safety
///
/// As `riptide_iter_key`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_iter_value(
    iter: *const riptide_iter_t,
    value_len: *mut usize,
) -> *const c_char {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the optional out-parameter
    // `value_len` and for `iter` as an exclusive handle (an iterator is not `Sync`), which
    // includes the handle rule `arg_opt` needs.
    let (iter, value_len) = unsafe { (arg_opt(iter), Out::optional(value_len)) };
    cursor_entry(iter, value_len, false)
}
