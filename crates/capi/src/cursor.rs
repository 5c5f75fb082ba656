//! What database and transaction iterators have in common, so the two families of
//! `riptide_*iter_*` functions share one implementation.

use std::ffi::c_char;

use riptide::{DbIterator, Result, TxnIterator};

use crate::ffi_util::{CResult, ErrMsg, Out, guard_value};
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

/// Moves the cursor behind the converted iterator handle `handle` by `step`.
pub(crate) fn step_cursor<H: CursorHandle>(
    handle: CResult<&mut H>,
    step: Step,
    errmsg: ErrMsg,
) -> riptide_status_t {
    move_cursor(handle, errmsg, |c| match step {
        Step::First => c.first(),
        Step::Last => c.last(),
        Step::Next => c.step_next(),
        Step::Prev => c.step_prev(),
    })
}

/// Moves the cursor behind the converted iterator handle `handle` with `f`.
fn move_cursor<H: CursorHandle>(
    handle: CResult<&mut H>,
    errmsg: ErrMsg,
    f: impl FnOnce(&mut H::C) -> CResult,
) -> riptide_status_t {
    errmsg.guard(|| f(handle?.cursor()))
}

/// Seeks the cursor behind the converted iterator handle `handle` to `target`, forward or
/// for prev.
pub(crate) fn seek_cursor<H: CursorHandle>(
    handle: CResult<&mut H>,
    target: CResult<&[u8]>,
    for_prev: bool,
    errmsg: ErrMsg,
) -> riptide_status_t {
    move_cursor(handle, errmsg, |c| {
        let target = target?;
        if for_prev {
            c.seek_for_prev(target)
        } else {
            c.seek(target)
        }
    })
}

/// Whether the cursor behind the converted iterator handle `handle` is valid; false for
/// NULL.
pub(crate) fn cursor_valid<H: CursorHandle>(handle: Option<&H>) -> bool {
    guard_value(false, || handle.is_some_and(|h| h.cursor_ref().valid()))
}

/// The current key (`want_key`) or value of the cursor behind the converted iterator handle
/// `handle`, as a pointer into the cursor valid until it moves, with its length stored in
/// `*len` when asked for. NULL (length 0) when the handle is NULL or the cursor is not valid.
pub(crate) fn cursor_entry<H: CursorHandle>(
    handle: Option<&H>,
    len: Option<Out<usize>>,
    want_key: bool,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let entry = handle
            .map(|h| h.cursor_ref())
            .filter(|c| c.valid())
            .map(|c| if want_key { c.key() } else { c.value() });
        if let Some(out) = len {
            out.set(entry.map_or(0, <[u8]>::len));
        }
        entry.map_or(std::ptr::null(), |e| e.as_ptr().cast())
    })
}
