//! `riptide_hcursor_t`: MariaDB's index reads over one index of a table, in key tuples
//! (crate `riptide-handler`, `Cursor`). The caller hands over what only it can compute, the
//! memcomparable bytes of a (possibly partial) index tuple; the cursor owns index prefixes,
//! successors, stop keys and entry decoding, and returns each row (its primary key tuple,
//! its secondary key tuple and the row bytes) in one call.

use std::ffi::c_char;

use riptide::Error;
use riptide_handler::{Cursor, CursorMode, CursorRow, HandlerError, RowLock, Seek, Session};

use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_mut, arg_opt, arg_opt_mut, arg_ref, bytes, destroy_handle,
    guard_value, into_handle, opt_bytes,
};
use crate::handler_session::riptide_hsession_t;
use crate::handler_table::riptide_htable_t;
use crate::handler_util::hguard;
use crate::status::riptide_status_t;

/// Cursor mode (`riptide_hcursor_set_mode`): plain reads of the session's snapshot (the
/// default). Modes 0 to 4 have the values of the `RIPTIDE_ROW_LOCK_*` constants.
pub const RIPTIDE_HCURSOR_SNAPSHOT: i32 = 0;
/// Cursor mode: a locking read taking shared row locks (`LOCK IN SHARE MODE`, the source
/// rows of writing statements under REPEATABLE READ, SERIALIZABLE reads): the newest
/// committed entries merged with the session's own, each row locked, and under REPEATABLE
/// READ and SERIALIZABLE the gaps walked.
pub const RIPTIDE_HCURSOR_SHARED: i32 = 1;
/// Cursor mode: a locking read taking exclusive row locks (`FOR UPDATE`, UPDATE, DELETE).
pub const RIPTIDE_HCURSOR_EXCLUSIVE: i32 = 2;
/// Cursor mode: `RIPTIDE_HCURSOR_SHARED` that never waits (`LOCK IN SHARE MODE SKIP
/// LOCKED`): rows another session holds in a conflicting mode are stepped over.
pub const RIPTIDE_HCURSOR_SHARED_SKIP_LOCKED: i32 = 3;
/// Cursor mode: `RIPTIDE_HCURSOR_EXCLUSIVE` that never waits (`FOR UPDATE SKIP LOCKED`).
pub const RIPTIDE_HCURSOR_EXCLUSIVE_SKIP_LOCKED: i32 = 4;
/// Cursor mode: a long UNIQUE key's duplicate check (after `riptide_hsession_lock_value`):
/// the newest committed entries merged with the session's own, no gap locks, the rows found
/// read with a shared lock (MariaDB's INSERT).
pub const RIPTIDE_HCURSOR_CURRENT_SHARED: i32 = 5;
/// Cursor mode: as `RIPTIDE_HCURSOR_CURRENT_SHARED`, the rows found locked exclusively
/// (REPLACE, INSERT ... ON DUPLICATE KEY UPDATE: the statement goes on to change them).
pub const RIPTIDE_HCURSOR_CURRENT_EXCLUSIVE: i32 = 6;

/// Seek (`riptide_hcursor_seek`): the first entry at or after the tuple
/// (`HA_READ_KEY_EXACT`, `HA_READ_PREFIX`, `HA_READ_KEY_OR_NEXT`); the read goes forward.
pub const RIPTIDE_HSEEK_AT_OR_AFTER: i32 = 0;
/// Seek: the first entry after every entry that starts with the tuple
/// (`HA_READ_AFTER_KEY`); forward.
pub const RIPTIDE_HSEEK_AFTER: i32 = 1;
/// Seek: the last entry before every entry that starts with the tuple
/// (`HA_READ_BEFORE_KEY`); backward.
pub const RIPTIDE_HSEEK_BEFORE: i32 = 2;
/// Seek: the last entry that starts with the tuple, or else the last one before it
/// (`HA_READ_KEY_OR_PREV`, `HA_READ_PREFIX_LAST`, `HA_READ_PREFIX_LAST_OR_PREV`);
/// backward.
pub const RIPTIDE_HSEEK_AT_OR_BEFORE: i32 = 3;

/// A cursor over one index of a table (opaque): made by `riptide_hcursor_create`, freed by
/// `riptide_hcursor_destroy`. Each read takes the session it reads through; the cursor
/// outlives transactions (the session drops its iterator when the transaction ends, and
/// the next step goes on after the entry read last). One thread at a time, with sessions
/// of that thread: a call that takes a cursor needs it used by the calling thread alone
/// (most calls change it); it may move to another thread between calls. (The Rust type is
/// `Send` and `Sync`, but the ABI passes a cursor as an exclusive handle.)
pub struct riptide_hcursor_t {
    pub(crate) cursor: Cursor,
}

/// What a cursor read returns. The pointers are views into the cursor, valid until the
/// next call on it (or on its session).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_hrow_t {
    /// Whether a row was found; the other fields are empty when not.
    pub found: bool,
    /// The primary key tuple (a hidden primary key: the 8-byte row id): the row's
    /// reference, as `riptide_hsession_get_row`, `_update`, `_delete` take it.
    pub pk: *const c_char,
    /// Length of `pk`.
    pub pk_len: usize,
    /// The secondary key tuple of the entry (empty on the primary key).
    pub key: *const c_char,
    /// Length of `key`.
    pub key_len: usize,
    /// The row bytes as written; NULL when the cursor reads keys only
    /// (`riptide_hcursor_set_keys_only`).
    pub row: *const c_char,
    /// Length of `row`.
    pub row_len: usize,
}

impl riptide_hrow_t {
    /// Nothing found.
    const NONE: riptide_hrow_t = riptide_hrow_t {
        found: false,
        pk: std::ptr::null(),
        pk_len: 0,
        key: std::ptr::null(),
        key_len: 0,
        row: std::ptr::null(),
        row_len: 0,
    };

    fn of(r: Option<CursorRow<'_>>) -> riptide_hrow_t {
        let Some(r) = r else {
            return riptide_hrow_t::NONE;
        };
        let (row, row_len) = match r.row {
            Some(b) => (b.as_ptr().cast(), b.len()),
            None => (std::ptr::null(), 0),
        };
        riptide_hrow_t {
            found: true,
            pk: r.pk.as_ptr().cast(),
            pk_len: r.pk.len(),
            key: r.key.as_ptr().cast(),
            key_len: r.key.len(),
            row,
            row_len,
        }
    }
}

/// Makes a cursor over index `index` of `table` (0: the primary or hidden key, then the
/// secondary indexes in order) in `RIPTIDE_HCURSOR_SNAPSHOT` mode, not positioned.
/// `RIPTIDE_INVALID_ARGUMENT` if the table has no such index.
///
/// # Safety
///
/// `table` is NULL or a live table handle; `cursor` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_create(
    table: *const riptide_htable_t,
    index: usize,
    cursor: *mut *mut riptide_hcursor_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `cursor`
    // and `errmsg` and the handle `table`.
    let (out, table, errmsg) = unsafe {
        (
            Out::new(cursor, "cursor"),
            arg_ref(table, "table"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let c = Cursor::new(table?.table.clone(), index)?;
        out.set(into_handle(riptide_hcursor_t { cursor: c }));
        Ok(())
    })
}

/// Frees a cursor. NULL is a no-op.
///
/// # Safety
///
/// `cursor` is NULL or a live cursor handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_destroy(cursor: *mut riptide_hcursor_t) {
    // SAFETY: per `# Safety`, `cursor` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_hcursor_create` and never used again.
    unsafe { destroy_handle(cursor) }
}

/// Sets how the following reads read (`RIPTIDE_HCURSOR_*`). A different mode drops the
/// cursor's iterator and forgets the rows the statement moved.
///
/// # Safety
///
/// `cursor` is NULL or a live cursor handle used by this thread alone; `errmsg` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_set_mode(
    cursor: *mut riptide_hcursor_t,
    mode: i32,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `cursor`
    // and the out-parameter `errmsg`.
    let (cursor, errmsg) = unsafe { (arg_mut(cursor, "cursor"), ErrMsg::new(errmsg)) };
    hguard(errmsg, || {
        let c = &mut cursor?.cursor;
        let locking = |lock, skip_locked| CursorMode::Locking { lock, skip_locked };
        let m = match mode {
            RIPTIDE_HCURSOR_SNAPSHOT => CursorMode::Snapshot,
            RIPTIDE_HCURSOR_SHARED => locking(RowLock::Shared, false),
            RIPTIDE_HCURSOR_EXCLUSIVE => locking(RowLock::Exclusive, false),
            RIPTIDE_HCURSOR_SHARED_SKIP_LOCKED => locking(RowLock::Shared, true),
            RIPTIDE_HCURSOR_EXCLUSIVE_SKIP_LOCKED => locking(RowLock::Exclusive, true),
            RIPTIDE_HCURSOR_CURRENT_SHARED => CursorMode::Current {
                row_lock: RowLock::Shared,
            },
            RIPTIDE_HCURSOR_CURRENT_EXCLUSIVE => CursorMode::Current {
                row_lock: RowLock::Exclusive,
            },
            other => {
                return Err(Error::invalid_argument(format!(
                    "mode {other} is not a RIPTIDE_HCURSOR_* value"
                ))
                .into());
            }
        };
        c.set_mode(m);
        Ok(())
    })
}

/// Asks the cursor to return key tuples without reading rows (`riptide_hrow_t.row` NULL):
/// an index-only read whose columns the caller decodes from the tuples. Returns whether it
/// is granted: only for a secondary index in `RIPTIDE_HCURSOR_SNAPSHOT` mode, by a session
/// that has not written an entry of the index (once it has, an entry of its snapshot may
/// point to a row it has since changed: read rows and check them against their entries).
/// `want` false switches it off. False for NULL.
///
/// # Safety
///
/// `session` and `cursor` are NULL or live session and cursor handles used by this thread
/// alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_set_keys_only(
    session: *const riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    want: bool,
) -> bool {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // (only read here: the handle rule `arg_opt` needs is part of it) and `cursor`.
    let (session, cursor) = unsafe { (arg_opt(session), arg_opt_mut(cursor)) };
    guard_value(false, || {
        let (Some(s), Some(c)) = (session, cursor) else {
            return false;
        };
        c.cursor.set_keys_only(&s.session, want)
    })
}

/// Sets where the forward steps of a locking read end (MariaDB's `end_range`): after every
/// entry that starts with the tuple `(tuple, tuple_len)` (`inclusive`) or before the first
/// one; a NULL `tuple` (length 0): the end of the index. Under READ COMMITTED the read does
/// not lock the first entry past it (under REPEATABLE READ and SERIALIZABLE that entry is
/// next-key locked, as InnoDB does). Plain reads ignore it.
///
/// # Safety
///
/// `cursor` is NULL or a live cursor handle used by this thread alone; `(tuple, tuple_len)`
/// is NULL (with length 0) or `tuple_len` readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_set_range_end(
    cursor: *mut riptide_hcursor_t,
    tuple: *const c_char,
    tuple_len: usize,
    inclusive: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `cursor`,
    // the byte string `tuple` and the out-parameter `errmsg`.
    let (cursor, tuple, errmsg) = unsafe {
        (
            arg_mut(cursor, "cursor"),
            opt_bytes(tuple, tuple_len, "tuple"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (c, end) = (&mut cursor?.cursor, tuple?);
        c.set_range_end(end.map(|t| (t, inclusive)));
        Ok(())
    })
}

/// Ends the statement's use of the cursor (MariaDB's `handler::reset`): drops its iterator,
/// forgets the rows the statement moved and the range end. The position stays. NULL is a
/// no-op.
///
/// # Safety
///
/// `cursor` is NULL or a live cursor handle used by this thread alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_reset(cursor: *mut riptide_hcursor_t) {
    // SAFETY: per `# Safety`, `cursor` follows the exclusive handle rule of the ffi_util
    // contract.
    let cursor = unsafe { arg_opt_mut(cursor) };
    guard_value((), || {
        if let Some(c) = cursor {
            c.cursor.reset();
        }
    });
}

/// The parameters every cursor read takes, converted: the exclusive handles `session` and
/// `cursor` and the out-parameters `row` and `errmsg`.
struct ReadArgs<'a> {
    session: CResult<&'a mut riptide_hsession_t>,
    cursor: CResult<&'a mut riptide_hcursor_t>,
    row: CResult<Out<riptide_hrow_t>>,
    errmsg: ErrMsg,
}

impl ReadArgs<'_> {
    /// Converts the parameters; reports nothing yet ([`ReadArgs::read`] does).
    ///
    /// # Safety
    ///
    /// For as long as the returned value lives, `session` and `cursor` follow the exclusive
    /// handle rule and `row` and `errmsg` the out-parameter rule (`ffi_util` module docs).
    unsafe fn new(
        session: *mut riptide_hsession_t,
        cursor: *mut riptide_hcursor_t,
        row: *mut riptide_hrow_t,
        errmsg: *mut *mut c_char,
    ) -> Self {
        // SAFETY: `arg_mut` needs the exclusive handle rule for `session` and `cursor`, and
        // `Out::new` and `ErrMsg::new` the out-parameter rule for `row` and `errmsg`, while
        // what they return lives: this function's contract gives both for as long as the
        // `ReadArgs` holding them.
        unsafe {
            ReadArgs {
                session: arg_mut(session, "session"),
                cursor: arg_mut(cursor, "cursor"),
                row: Out::new(row, "row"),
                errmsg: ErrMsg::new(errmsg),
            }
        }
    }

    /// The body of every cursor read: checks `row` and clears `*row`, checks the handles,
    /// runs the read and fills `*row` with the cursor's row when it found one.
    fn read(
        self,
        f: impl FnOnce(&mut Cursor, &mut Session) -> Result<bool, HandlerError>,
    ) -> riptide_status_t {
        let ReadArgs {
            session,
            cursor,
            row,
            errmsg,
        } = self;
        hguard(errmsg, || {
            let out = row?;
            out.set(riptide_hrow_t::NONE);
            let (s, c) = (&mut session?.session, &mut cursor?.cursor);
            if f(c, s)? {
                out.set(riptide_hrow_t::of(c.row()));
            }
            Ok(())
        })
    }
}

/// Positions on the entry `how` (`RIPTIDE_HSEEK_*`) and the key tuple `(tuple, tuple_len)`
/// name, and reads it into `*row` (`row->found` false when there is none). With `exact`,
/// only an entry that starts with the tuple counts (and a forward read ends after the
/// entries that do).
///
/// # Safety
///
/// `session` and `cursor` are NULL or live session and cursor handles used by this thread
/// alone; `(tuple, tuple_len)` is NULL (with length 0) or `tuple_len` readable bytes; `row`
/// and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_seek(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    tuple: *const c_char,
    tuple_len: usize,
    how: i32,
    exact: bool,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor`, the byte string `tuple` and the out-parameters `row` and `errmsg`.
    let (args, tuple) = unsafe {
        (
            ReadArgs::new(session, cursor, row, errmsg),
            bytes(tuple, tuple_len, "tuple"),
        )
    };
    args.read(|c, s| {
        let tuple = tuple?;
        let how = match how {
            RIPTIDE_HSEEK_AT_OR_AFTER => Seek::AtOrAfter,
            RIPTIDE_HSEEK_AFTER => Seek::After,
            RIPTIDE_HSEEK_BEFORE => Seek::Before,
            RIPTIDE_HSEEK_AT_OR_BEFORE => Seek::AtOrBefore,
            other => {
                return Err(Error::invalid_argument(format!(
                    "seek {other} is not a RIPTIDE_HSEEK_* value"
                ))
                .into());
            }
        };
        c.seek(s, tuple, how, exact)
    })
}

/// Positions on the first entry of the index and reads it into `*row`.
///
/// # Safety
///
/// `session` and `cursor` are NULL or live session and cursor handles used by this thread
/// alone; `row` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_first(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor` and the out-parameters `row` and `errmsg`.
    let args = unsafe { ReadArgs::new(session, cursor, row, errmsg) };
    args.read(|c, s| c.first(s))
}

/// Positions on the last entry of the index and reads it into `*row`.
///
/// # Safety
///
/// As `riptide_hcursor_first`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_last(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor` and the out-parameters `row` and `errmsg`.
    let args = unsafe { ReadArgs::new(session, cursor, row, errmsg) };
    args.read(|c, s| c.last(s))
}

/// Steps forward and reads the next entry into `*row` (the first one when the cursor is
/// not positioned yet); a locking read ends at its range end. With a `within` tuple (not
/// NULL), only an entry that starts with it counts (`row->found` is false otherwise) and a
/// locking read ends right after those entries (`index_next_same`).
///
/// # Safety
///
/// As `riptide_hcursor_seek`, with `within` for `tuple`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_next(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    within: *const c_char,
    within_len: usize,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor`, the byte string `within` and the out-parameters `row` and `errmsg`.
    let (args, within) = unsafe {
        (
            ReadArgs::new(session, cursor, row, errmsg),
            opt_bytes(within, within_len, "within"),
        )
    };
    args.read(|c, s| c.next(s, within?))
}

/// Steps backward and reads the previous entry into `*row` (the last one when the cursor
/// is not positioned yet). With a `within` tuple (not NULL), only an entry that starts with
/// it counts.
///
/// # Safety
///
/// As `riptide_hcursor_next`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_prev(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    within: *const c_char,
    within_len: usize,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor`, the byte string `within` and the out-parameters `row` and `errmsg`.
    let (args, within) = unsafe {
        (
            ReadArgs::new(session, cursor, row, errmsg),
            opt_bytes(within, within_len, "within"),
        )
    };
    args.read(|c, s| c.prev(s, within?))
}

/// Reads the row with primary key tuple `(pk, pk_len)` through a cursor over the primary
/// key (index 0), locking it as the cursor's mode says, into `*row`, and positions the
/// cursor there: the next step goes on from that key whether or not the row exists (a
/// point read of a whole primary key, then `index_next`). `RIPTIDE_INVALID_ARGUMENT` on a
/// cursor over another index.
///
/// # Safety
///
/// As `riptide_hcursor_seek`, with `pk` for `tuple`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_get(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    pk: *const c_char,
    pk_len: usize,
    row: *mut riptide_hrow_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `cursor`, the byte string `pk` and the out-parameters `row` and `errmsg`.
    let (args, pk) = unsafe {
        (
            ReadArgs::new(session, cursor, row, errmsg),
            bytes(pk, pk_len, "pk"),
        )
    };
    args.read(|c, s| c.get(s, pk?))
}

/// MariaDB's `unlock_row` for the row the cursor read last: under READ COMMITTED (and READ
/// UNCOMMITTED), releases the locks that read took on it (its entry and its row) when the
/// statement does not want the row, if the open statement took them and the session has
/// not written the row; under REPEATABLE READ and SERIALIZABLE nothing goes. A no-op
/// without a locked current row.
///
/// # Safety
///
/// `session` and `cursor` are NULL or live session and cursor handles used by this thread
/// alone; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hcursor_unlock_current(
    session: *mut riptide_hsession_t,
    cursor: *mut riptide_hcursor_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // (only read here: the handle rule `arg_ref` needs is part of it) and `cursor`, and the
    // out-parameter `errmsg`.
    let (session, cursor, errmsg) = unsafe {
        (
            arg_ref(session, "session"),
            arg_mut(cursor, "cursor"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (s, c) = (&session?.session, &mut cursor?.cursor);
        c.unlock_current(s)
    })
}
