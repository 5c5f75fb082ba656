//! What database and transaction iterators have in common, so the two families of
//! `riptide_*iter_*` functions share one implementation.

use std::ffi::c_char;

use riptide::{DbIterator, Result, TxnIterator};

use crate::ffi_util::{CResult, arg_mut, bytes, guard, guard_value, query};
use crate::status::riptide_status_t;

/// A positioned cursor over keys in order.
pub(crate) trait Cursor {
    /// Positions on the first key.
    fn first(&mut self) -> Result<()>;
    /// Positions on the last key.
    fn last(&mut self) -> Result<()>;
    /// Positions on the first key >= `target`.
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Positions on the last key <= `target`.
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()>;
    /// Steps forward.
    fn step_next(&mut self) -> Result<()>;
    /// Steps backward.
    fn step_prev(&mut self) -> Result<()>;
    /// Whether positioned on an entry.
    fn valid(&self) -> bool;
    /// The current key (empty when not valid).
    fn key(&self) -> &[u8];
    /// The current value (empty when not valid).
    fn value(&self) -> &[u8];
}

impl Cursor for DbIterator {
    fn first(&mut self) -> Result<()> {
        DbIterator::seek_to_first(self)
    }
    fn last(&mut self) -> Result<()> {
        DbIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        DbIterator::seek(self, target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        DbIterator::seek_for_prev(self, target)
    }
    fn step_next(&mut self) -> Result<()> {
        DbIterator::next(self)
    }
    fn step_prev(&mut self) -> Result<()> {
        DbIterator::prev(self)
    }
    fn valid(&self) -> bool {
        DbIterator::valid(self)
    }
    fn key(&self) -> &[u8] {
        DbIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        DbIterator::value(self)
    }
}

impl Cursor for TxnIterator {
    fn first(&mut self) -> Result<()> {
        TxnIterator::seek_to_first(self)
    }
    fn last(&mut self) -> Result<()> {
        TxnIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        TxnIterator::seek(self, target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        TxnIterator::seek_for_prev(self, target)
    }
    fn step_next(&mut self) -> Result<()> {
        TxnIterator::next(self)
    }
    fn step_prev(&mut self) -> Result<()> {
        TxnIterator::prev(self)
    }
    fn valid(&self) -> bool {
        TxnIterator::valid(self)
    }
    fn key(&self) -> &[u8] {
        TxnIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        TxnIterator::value(self)
    }
}

/// A handle that owns a cursor.
pub(crate) trait CursorHandle {
    /// The cursor type.
    type C: Cursor;
    /// The cursor.
    fn cursor(&mut self) -> &mut Self::C;
    /// The cursor, read-only.
    fn cursor_ref(&self) -> &Self::C;
}

/// A move that needs no target.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// To the first key.
    First,
    /// To the last key.
    Last,
    /// To the next key.
    Next,
    /// To the previous key.
    Prev,
}

/// Moves the cursor behind `handle` by `step`.
///
/// # Safety
///
/// `handle` is NULL or a live handle used by this thread alone; `errmsg` is NULL or writable.
pub(crate) unsafe fn step_cursor<H: CursorHandle>(
    handle: *mut H,
    step: Step,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        move_cursor(handle, errmsg, |c| match step {
            Step::First => c.first(),
            Step::Last => c.last(),
            Step::Next => c.step_next(),
            Step::Prev => c.step_prev(),
        })
    }
}

/// Moves the cursor behind `handle` with `f`.
///
/// # Safety
///
/// `handle` is NULL or a live handle used by this thread alone; `errmsg` is NULL or writable.
unsafe fn move_cursor<H: CursorHandle>(
    handle: *mut H,
    errmsg: *mut *mut c_char,
    f: impl FnOnce(&mut H::C) -> CResult,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            f(arg_mut(handle, "iter")?.cursor())
        })
    }
}

/// Seeks the cursor behind `handle` to `(target, target_len)`, forward or for prev.
///
/// # Safety
///
/// As [`move_cursor`]; `(target, target_len)` is NULL or `target_len` readable bytes.
pub(crate) unsafe fn seek_cursor<H: CursorHandle>(
    handle: *mut H,
    target: *const c_char,
    target_len: usize,
    for_prev: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        move_cursor(handle, errmsg, |c| {
            // SAFETY: forwarded contract.
            let target = bytes(target, target_len, "target")?;
            if for_prev {
                c.seek_for_prev(target)
            } else {
                c.seek(target)
            }
        })
    }
}

/// Whether the cursor behind `handle` is valid; false for NULL.
///
/// # Safety
///
/// `handle` is NULL or a live handle not being moved by another thread.
pub(crate) unsafe fn cursor_valid<H: CursorHandle>(handle: *const H) -> bool {
    // SAFETY: forwarded contract.
    unsafe { query(handle, false, |h| h.cursor_ref().valid()) }
}

/// The current key (`want_key`) or value of the cursor behind `handle`, as a pointer into
/// the cursor valid until it moves, with its length stored in `*len`. NULL (length 0) when
/// the handle is NULL or the cursor is not valid.
///
/// # Safety
///
/// `handle` is NULL or a live handle not being moved by another thread; `len` is NULL or
/// writable.
pub(crate) unsafe fn cursor_entry<H: CursorHandle>(
    handle: *const H,
    len: *mut usize,
    want_key: bool,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        let h = unsafe { handle.as_ref() };
        let entry = h
            .map(|h| h.cursor_ref())
            .filter(|c| c.valid())
            .map(|c| if want_key { c.key() } else { c.value() });
        // SAFETY: forwarded contract.
        if let Some(out) = unsafe { len.as_mut() } {
            *out = entry.map_or(0, <[u8]>::len);
        }
        entry.map_or(std::ptr::null(), |e| e.as_ptr().cast())
    })
}
