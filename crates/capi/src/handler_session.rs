//! `riptide_hsession_t`: a connection's session of the handler layer (one pessimistic
//! transaction; statement and SQL savepoints; KILL), its row operations (insert, update,
//! delete with unique checks; point reads; unlocking a row a read did not want) and CHECK
//! TABLE. Index reads go through cursors (`handler_cursor.rs`).

use std::ffi::{c_char, c_void};
use std::time::Duration;

use riptide::{Error, InterruptHandle, LockedRead};
use riptide_handler::{HandlerError, Isolation, Session, SessionOptions};

use crate::ffi_util::{
    Out, arg_mut, arg_ref, bytes, destroy_handle, guard_status, into_handle, query,
};
use crate::handler_cursor::riptide_hcursor_t;
use crate::handler_engine::riptide_handler_t;
use crate::handler_table::riptide_htable_t;
use crate::handler_util::{handler_status, hguard, row_lock, sec_keys};
use crate::kv::ValueOut;
use crate::memory::malloc_string;
use crate::status::riptide_status_t;
use crate::xid::xid_from_parts;

/// Row lock mode of `riptide_hsession_get_row`: a plain read.
pub const RIPTIDE_ROW_LOCK_NONE: i32 = 0;

/// Row lock mode: shared (`LOCK IN SHARE MODE`).
pub const RIPTIDE_ROW_LOCK_SHARED: i32 = 1;

/// Row lock mode: exclusive (`FOR UPDATE`, reads of writing statements).
pub const RIPTIDE_ROW_LOCK_EXCLUSIVE: i32 = 2;

/// Row lock mode: shared, never waiting (`LOCK IN SHARE MODE SKIP LOCKED`). With
/// `riptide_hsession_get_row`, a row another session holds in a conflicting mode is
/// reported as `RIPTIDE_BUSY` (skip it); with `riptide_hsession_iter_create_locking`, the
/// iterator steps over such entries.
pub const RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED: i32 = 3;

/// Row lock mode: exclusive, never waiting (`FOR UPDATE SKIP LOCKED`); as
/// `RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED`.
pub const RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED: i32 = 4;

/// Session isolation (`riptide_hsession_begin`): READ UNCOMMITTED (runs as read committed).
pub const RIPTIDE_HISO_READ_UNCOMMITTED: i32 = 0;

/// Session isolation: READ COMMITTED.
pub const RIPTIDE_HISO_READ_COMMITTED: i32 = 1;

/// Session isolation: REPEATABLE READ.
pub const RIPTIDE_HISO_REPEATABLE_READ: i32 = 2;

/// Session isolation: SERIALIZABLE (runs as repeatable read).
pub const RIPTIDE_HISO_SERIALIZABLE: i32 = 3;

/// A session (opaque): one transaction with statement savepoints. Made by
/// `riptide_hsession_begin`, freed by `riptide_hsession_destroy` (rolls back if unfinished).
/// One thread at a time; destroy its iterators first.
pub struct riptide_hsession_t {
    pub(crate) session: Session,
}

/// An interrupter of one session's lock waits (opaque): made by
/// `riptide_hsession_interrupter`, freed by `riptide_hinterrupt_destroy`. Thread-safe:
/// `riptide_hinterrupt_fire` may be called from any thread, while the session's thread runs
/// any call (a lock wait included), and after the session was destroyed (then it does
/// nothing useful, harmlessly). It holds neither the session nor the database open.
pub struct riptide_hinterrupt_t {
    handle: InterruptHandle,
}

/// One secondary key of a row: the memcomparable bytes and whether a part is NULL (a key with
/// a NULL part never conflicts in a unique index).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_hkey_t {
    /// Key bytes (NULL only with `len` 0).
    pub data: *const c_char,
    /// Length of `data`.
    pub len: usize,
    /// Whether a key part is NULL.
    pub has_null: bool,
}

/// Begins a session (one pessimistic transaction) with `isolation` (`RIPTIDE_HISO_*`) and
/// a lock wait limit of `lock_timeout_ms` (0: the default, 50 s). Under repeatable read the
/// snapshot is taken at the first read (`riptide_hsession_begin_snapshot` takes it at once).
///
/// # Safety
///
/// `handler` NULL or live; `session` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { begin_session(handler, isolation, lock_timeout_ms, false, session, errmsg) }
}

/// As `riptide_hsession_begin`, but the session takes its read snapshot now, not at its
/// first read (`START TRANSACTION WITH CONSISTENT SNAPSHOT`; under read committed every
/// read still sees the newest committed data).
///
/// # Safety
///
/// As `riptide_hsession_begin`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin_snapshot(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { begin_session(handler, isolation, lock_timeout_ms, true, session, errmsg) }
}

/// Whether the session has taken its read snapshot (at begin with
/// `riptide_hsession_begin_snapshot`, else at its first read under repeatable read); false
/// for NULL.
///
/// # Safety
///
/// `session` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_has_snapshot(session: *const riptide_hsession_t) -> bool {
    // SAFETY: forwarded contract.
    unsafe { query(session, false, |s| s.session.has_snapshot()) }
}

/// Makes an interrupter of the session's lock waits in `*interrupter` (MariaDB's `KILL
/// QUERY`, a shutdown): `riptide_hinterrupt_fire` on it makes the session's current lock
/// wait (a row lock of any call, a unique check, an insert into a locked gap, a locking
/// iterator's step) fail promptly with `RIPTIDE_INTERRUPTED`, and every later wait fail so
/// at once, until `riptide_hsession_clear_interrupt`. Locks granted without waiting are not
/// affected. The session stays usable after an interrupted wait, as after
/// `RIPTIDE_TIMED_OUT`: it keeps the locks it held, and the call that failed changed
/// nothing. Each call makes a new handle on the same interrupt; free each with
/// `riptide_hinterrupt_destroy`.
///
/// Threads: call this on the session's own thread (like any session call); then the handle
/// belongs to whoever holds it, and `riptide_hinterrupt_fire` may be called from any thread
/// at any time, the session's own calls and its destruction included. The handle must not
/// be destroyed while another thread fires it.
///
/// # Safety
///
/// `session` NULL or live; `interrupter` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_interrupter(
    session: *const riptide_hsession_t,
    interrupter: *mut *mut riptide_hinterrupt_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(interrupter, "interrupter")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let s = &arg_ref(session, "session")?.session;
            out.set(into_handle(riptide_hinterrupt_t {
                handle: s.interrupt_handle(),
            }));
            Ok(())
        })
    }
}

/// Interrupts the lock waits of the session `interrupter` was made for: its current wait,
/// if any, ends with `RIPTIDE_INTERRUPTED` (within a thread wake-up, well under a
/// millisecond on an idle machine), and so does every later one until the session calls
/// `riptide_hsession_clear_interrupt`. Callable from any thread, concurrently with any call
/// on the session (that is the point) and after the session was destroyed (then nothing
/// happens). Briefly wakes every lock waiter of the database (the others go back to
/// waiting): meant for rare events, not a per-row call. NULL is a no-op.
///
/// # Safety
///
/// `interrupter` is NULL or a live handle, not destroyed during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_fire(interrupter: *const riptide_hinterrupt_t) {
    // SAFETY: forwarded contract.
    unsafe { query(interrupter, (), |h| h.handle.interrupt()) }
}

/// Frees an interrupter (its session is not affected; an interrupt it fired stays in force
/// until `riptide_hsession_clear_interrupt`). NULL is a no-op.
///
/// # Safety
///
/// `interrupter` is NULL or a live handle that no thread uses during or after the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_destroy(interrupter: *mut riptide_hinterrupt_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(interrupter) }
}

/// Re-arms the session after `riptide_hinterrupt_fire`: its lock waits wait normally again.
/// MariaDB: at the start of each statement, so that a `KILL QUERY` that arrived just before
/// a wait began is not lost within its statement, and does not outlive it. NULL is a no-op.
///
/// # Safety
///
/// `session` NULL or live (used by this thread, as any session call).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_clear_interrupt(session: *mut riptide_hsession_t) {
    // SAFETY: forwarded contract.
    unsafe { query(session.cast_const(), (), |s| s.session.clear_interrupt()) }
}

/// Sets the limit of the session's lock waits from now on to `timeout_ms` milliseconds
/// (every wait: row locks of reads and writes, unique checks, inserts into a locked gap,
/// locking iterator steps), until changed again: MariaDB's `SELECT ... NOWAIT` and `WAIT n`
/// for one statement (set it before, restore the session's value after). Unlike
/// `riptide_hsession_begin`'s `lock_timeout_ms`, 0 here means "do not wait": a lock that is
/// not free fails with `RIPTIDE_TIMED_OUT` at once. A wait already in progress keeps its
/// limit.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_lock_timeout(
    session: *mut riptide_hsession_t,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            s.set_lock_timeout(Duration::from_millis(timeout_ms));
            Ok(())
        })
    }
}

/// Bytes the session's transaction holds in memory for its writes and locks (keys, values,
/// undo and lock records; `riptide::Transaction::approximate_memory`); 0 for NULL. The
/// MariaDB plugin asks before a commit or rollback, to hand a big transaction's freed memory
/// back to the system afterwards.
///
/// # Safety
///
/// `session` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_approximate_memory(
    session: *const riptide_hsession_t,
) -> usize {
    // SAFETY: forwarded contract.
    unsafe { query(session, 0, |s| s.session.transaction().approximate_memory()) }
}

/// The body of `riptide_hsession_begin` and `riptide_hsession_begin_snapshot`.
///
/// # Safety
///
/// As `riptide_hsession_begin`.
unsafe fn begin_session(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    snapshot_at_begin: bool,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            let out = Out::new(session, "session")?;
            out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let h = arg_ref(handler, "handler")?;
            let isolation = match isolation {
                RIPTIDE_HISO_READ_UNCOMMITTED => Isolation::ReadUncommitted,
                RIPTIDE_HISO_READ_COMMITTED => Isolation::ReadCommitted,
                RIPTIDE_HISO_REPEATABLE_READ => Isolation::RepeatableRead,
                RIPTIDE_HISO_SERIALIZABLE => Isolation::Serializable,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "isolation {other} is not a RIPTIDE_HISO_* value"
                    ))
                    .into());
                }
            };
            let mut opts = SessionOptions {
                isolation,
                snapshot_at_begin,
                ..SessionOptions::default()
            };
            if lock_timeout_ms > 0 {
                opts.lock_timeout = Duration::from_millis(lock_timeout_ms);
            }
            let s = h.engine.begin_session(opts)?;
            out.set(into_handle(riptide_hsession_t { session: s }));
            Ok(())
        })
    }
}

/// Frees a session, rolling back an unfinished transaction. NULL is a no-op.
///
/// # Safety
///
/// `session` is NULL or live and not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_destroy(session: *mut riptide_hsession_t) {
    // SAFETY: forwarded contract.
    unsafe { destroy_handle(session) }
}

/// Runs `f` on the session.
///
/// # Safety
///
/// `session` NULL or live and used by this thread alone; `errmsg` NULL or writable.
unsafe fn with_session(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
    f: impl FnOnce(&mut Session) -> Result<(), HandlerError>,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        hguard(errmsg, || {
            // SAFETY: forwarded contract.
            f(&mut arg_mut(session, "session")?.session)
        })
    }
}

/// Commits the session's transaction (all tables and indexes in one atomic batch). The
/// session is finished afterwards, success or not: destroy it.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_commit(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::commit) }
}

/// Prepares the session's transaction under the xid `(format_id, gtrid, bqual)` (two-phase
/// commit, phase one: the writes are durable in the WAL, not yet visible, the locks stay
/// held). Finish it with `riptide_hsession_commit` / `riptide_hsession_rollback`; a session
/// destroyed while prepared leaves the transaction prepared, to be finished with
/// `riptide_commit_prepared` / `riptide_rollback_prepared` (also after a restart:
/// `riptide_prepared_list`). After a failure the transaction is rolled back.
///
/// # Safety
///
/// `session` NULL or live; each `(pointer, length)` pair NULL or `length` readable bytes;
/// `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_prepare(
    session: *mut riptide_hsession_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let xid = xid_from_parts(format_id, gtrid, gtrid_len, bqual, bqual_len)?;
            s.prepare(&xid)
        })
    }
}

/// Rolls back the session's transaction (already rolled back after a conflict: OK).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_rollback(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe { with_session(session, errmsg, Session::rollback) }
}

/// Begins a statement inside a multi-statement transaction: the session sets the
/// statement's savepoint, so that `riptide_hsession_end_statement(.., false)` undoes the
/// statement alone (its writes and the locks it took). A no-op while a statement is open
/// (MariaDB begins the statement once per table it locks). In autocommit no statement is
/// begun: the transaction is the statement. The session also decides from it which row
/// locks a statement took (`riptide_hsession_unlock_row`, `riptide_hcursor_unlock_current`).
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin_statement(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (`session`, `errmsg`).
    unsafe { with_session(session, errmsg, Session::begin_statement) }
}

/// Ends the open statement: keeps its writes (`success`) or undoes them (and the
/// savepoints and locks taken since it began). A no-op without one.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_end_statement(
    session: *mut riptide_hsession_t,
    success: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (`session`, `errmsg`).
    unsafe { with_session(session, errmsg, |s| s.end_statement(success)) }
}

/// SQL `SAVEPOINT`: sets a savepoint the caller names `id` (MariaDB: one number per
/// savepoint it keeps).
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_set(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (`session`, `errmsg`).
    unsafe { with_session(session, errmsg, |s| s.set_named_savepoint(id)) }
}

/// SQL `ROLLBACK TO SAVEPOINT`: undoes everything since savepoint `id` (the savepoints set
/// after it go; `id` stays), releasing the row locks taken since. `RIPTIDE_NOT_FOUND` if no
/// open savepoint has that id.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_rollback(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (`session`, `errmsg`).
    unsafe {
        with_session(session, errmsg, |s| {
            if s.rollback_to_named_savepoint(id)? {
                return Ok(());
            }
            Err(Error::not_found(format!("savepoint {id} is not open")).into())
        })
    }
}

/// SQL `RELEASE SAVEPOINT` (and MariaDB's release of an older savepoint of a name a new
/// `SAVEPOINT` reuses): forgets savepoint `id`, keeping its writes and the savepoints set
/// after it. `RIPTIDE_NOT_FOUND` if no open savepoint has that id.
///
/// # Safety
///
/// `session` NULL or live; `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_release(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (`session`, `errmsg`).
    unsafe {
        with_session(session, errmsg, |s| {
            if s.release_named_savepoint(id)? {
                return Ok(());
            }
            Err(Error::not_found(format!("savepoint {id} is not open")).into())
        })
    }
}

/// The duplicate-index out-parameter of a row write: NULL is allowed (no report).
///
/// # Safety
///
/// `dup_index` is NULL or writable.
unsafe fn dup_out(dup_index: *mut usize) -> Option<Out<usize>> {
    if dup_index.is_null() {
        return None;
    }
    // SAFETY: non-NULL and, per this function's contract, writable.
    unsafe { Out::new(dup_index, "dup_index") }.ok()
}

/// Inserts a row: its primary key tuple `pk`, one key tuple per secondary index in order,
/// and the row bytes. A table without a primary key (`RIPTIDE_INDEX_HIDDEN_PK`) takes no
/// `pk` (NULL, 0): the session allocates a new hidden row id, never handed out before (also
/// across crashes), and writes its 8 bytes, the row's reference, to `hidden_ref` (may be
/// NULL). `RIPTIDE_DUPLICATE_KEY` with `*dup_index` (0: the primary key) when the primary
/// key or a unique key without NULL parts exists.
///
/// # Safety
///
/// `session` and `table` NULL or live; every byte string readable; `keys` NULL (with
/// `nkeys` 0) or `nkeys` readable keys; `hidden_ref` NULL or writable for 8 bytes;
/// `dup_index` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_insert(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    keys: *const riptide_hkey_t,
    nkeys: usize,
    row: *const c_char,
    row_len: usize,
    hidden_ref: *mut u8,
    dup_index: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract: the handles are NULL or live,
    // `session` used by this thread alone, the byte strings and keys readable, the
    // out-parameters NULL or writable.
    unsafe {
        crate::calls::count();
        let dup = dup_out(dup_index);
        guard_status(errmsg, || {
            let run = || -> Result<(), HandlerError> {
                let s = &mut arg_mut(session, "session")?.session;
                let t = &arg_ref(table, "table")?.table;
                let pk = bytes(pk, pk_len, "pk")?;
                let keys = sec_keys(keys, nkeys)?;
                let row = bytes(row, row_len, "row")?;
                if t.has_hidden_pk() && pk.is_empty() {
                    let id = s.insert_hidden(t, &keys, row)?;
                    if !hidden_ref.is_null() {
                        std::ptr::copy_nonoverlapping(id.as_ptr(), hidden_ref, id.len());
                    }
                    return Ok(());
                }
                s.insert(t, pk, &keys, row)
            };
            run().map_err(|e| handler_status(e, dup.as_ref()))
        })
    }
}

/// Updates a row from (`old_pk`, `old_keys`) to (`new_pk`, `new_keys`, `row`); both key
/// arrays have `nkeys` entries. Unchanged secondary entries are not rewritten. Duplicates
/// as `riptide_hsession_insert`. `scan` is the cursor the statement reads the table with
/// (NULL: none): when the row's entry in the cursor's index moves, the cursor does not
/// return the row again (an UPDATE of a key the scan reads: the Halloween problem).
///
/// # Safety
///
/// As `riptide_hsession_insert`; `scan` NULL or a live cursor used by this thread alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_update(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    old_pk: *const c_char,
    old_pk_len: usize,
    old_keys: *const riptide_hkey_t,
    new_pk: *const c_char,
    new_pk_len: usize,
    new_keys: *const riptide_hkey_t,
    nkeys: usize,
    row: *const c_char,
    row_len: usize,
    scan: *mut riptide_hcursor_t,
    dup_index: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (as for riptide_hsession_insert,
    // and `scan` NULL or live).
    unsafe {
        crate::calls::count();
        let dup = dup_out(dup_index);
        guard_status(errmsg, || {
            let run = || -> Result<(), HandlerError> {
                let s = &mut arg_mut(session, "session")?.session;
                let t = &arg_ref(table, "table")?.table;
                let old_pk = bytes(old_pk, old_pk_len, "old_pk")?;
                let new_pk = bytes(new_pk, new_pk_len, "new_pk")?;
                let old_keys = sec_keys(old_keys, nkeys)?;
                let new_keys = sec_keys(new_keys, nkeys)?;
                let row = bytes(row, row_len, "row")?;
                let scan = scan.as_mut().map(|c| &mut c.cursor);
                s.update(t, old_pk, &old_keys, new_pk, &new_keys, row, scan)
            };
            run().map_err(|e| handler_status(e, dup.as_ref()))
        })
    }
}

/// Deletes the row `pk` whose secondary key tuples are `keys` (`nkeys`, one per secondary
/// index).
///
/// # Safety
///
/// As `riptide_hsession_insert`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_delete(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    keys: *const riptide_hkey_t,
    nkeys: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (handles, byte strings, keys).
    unsafe {
        with_session(session, errmsg, |s| {
            let t = &arg_ref(table, "table")?.table;
            let pk = bytes(pk, pk_len, "pk")?;
            let keys = sec_keys(keys, nkeys)?;
            s.delete(t, pk, &keys)
        })
    }
}

/// Reads the row with primary key `pk` as the session sees it, locking it per `lock`
/// (`RIPTIDE_ROW_LOCK_*`). Results as `riptide_txn_get` (free the value with
/// `riptide_free_value`). With `RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED` or
/// `RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED` the read never waits: a row whose lock another
/// session holds in a conflicting mode (or, for shared, has queued an exclusive request on)
/// is `RIPTIDE_BUSY` with `*found` false and nothing locked (`SKIP LOCKED`: skip the row);
/// any other row is locked and read as with the waiting mode. No other case returns
/// `RIPTIDE_BUSY`.
///
/// # Safety
///
/// `session` and `table` NULL or live; `pk` readable; `value`, `value_len`, `found`,
/// `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_get_row(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    lock: i32,
    value: *mut *mut c_char,
    value_len: *mut usize,
    found: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let out = ValueOut::new(value, value_len, found)?;
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let pk = bytes(pk, pk_len, "pk")?;
            let (mode, skip_locked) = row_lock(lock)?;
            if !skip_locked {
                out.deliver(s.get_row(t, pk, mode)?)?;
                return Ok(());
            }
            match s.get_row_skip_locked(t, pk, mode)? {
                LockedRead::Value(v) => out.deliver(v)?,
                LockedRead::LockedByOther => {
                    return Err(Error::busy(format!(
                        "row \"{}\" of table id {} is locked by another transaction \
                         (skip locked)",
                        pk.escape_ascii(),
                        t.id()
                    ))
                    .into());
                }
            }
            Ok(())
        })
    }
}

/// InnoDB's `unlock_row` for a row read by primary key (`riptide_hsession_get_row`): under
/// READ COMMITTED (and READ UNCOMMITTED), releases the lock on the row `(pk, pk_len)` of
/// `table` when the statement did not want the row, if the open statement took it (with no
/// statement open: any lock) and the session has not written the row; under REPEATABLE
/// READ and SERIALIZABLE nothing goes. Rows a cursor returned: `riptide_hcursor_unlock_current`.
/// Stores how many locks were released in `*released` (may be NULL).
///
/// # Safety
///
/// `session` and `table` NULL or live; `pk` readable; `released` and `errmsg` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_unlock_row(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    released: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: the caller upholds this function's contract (handles, `pk`, out-parameters).
    unsafe {
        with_session(session, errmsg, |s| {
            let t = &arg_ref(table, "table")?.table;
            let pk = bytes(pk, pk_len, "pk")?;
            let n = s.unlock_row(t, 0, None, pk)?;
            if !released.is_null() {
                released.write(n);
            }
            Ok(())
        })
    }
}

/// Locks the value `(key, key_len)` (the secondary key bytes, without the index id) of
/// secondary index `index` of `table` exclusively until the session's transaction ends,
/// as the engine's own unique checks do, without reading anything: waits while another
/// session holds it (`RIPTIDE_TIMED_OUT`, `RIPTIDE_DEADLOCK`). The MariaDB handler takes
/// it before the server's duplicate check of a long UNIQUE key, so that two sessions
/// inserting one value check one after the other. `RIPTIDE_INVALID_ARGUMENT` if `index` is
/// not a secondary index.
///
/// # Safety
///
/// `session` and `table` NULL or live; `key` readable for `key_len` bytes; `errmsg` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_lock_value(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            // SAFETY: forwarded contract.
            let key = bytes(key, key_len, "key")?;
            s.lock_value(t, index, key)
        })
    }
}

/// What `riptide_hsession_check_table` calls for each row: computes the row's secondary keys
/// from its primary key `(pk, pk_len)` and row bytes `(row, row_len)` (as stored by
/// `riptide_hsession_insert`), one per secondary index, into `keys[0..nkeys]`. The key bytes
/// must stay valid until the callback is called again or the check returns. Returns false
/// if the row bytes cannot be decoded (the check counts that as a problem of the primary
/// key). Must not unwind.
pub type riptide_hkeys_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        pk: *const c_char,
        pk_len: usize,
        row: *const c_char,
        row_len: usize,
        keys: *mut riptide_hkey_t,
        nkeys: usize,
    ) -> bool,
>;

/// `CHECK TABLE`: verifies `table` as the session sees it: every row has, in every
/// secondary index, the entry `keys_fn` computes for it, and every secondary entry points
/// to an existing row whose key for that index is the entry's key; a row `keys_fn` cannot
/// decode is a problem of the primary key (index 0). Stores the number of
/// inconsistencies in `*problems` and, if there are any, a report of the first
/// `max_problems` of them in `*report` (one line each, `index `name`: what`, NUL-terminated;
/// free it with `riptide_free`; NULL when there is none). Inconsistencies are not an error
/// (`RIPTIDE_OK`); a failing read or callback is.
///
/// # Safety
///
/// `session` and `table` NULL or live; `keys_fn` NULL or a callback honouring its contract
/// with `ctx`; `problems`, `report` and `errmsg` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_check_table(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    keys_fn: riptide_hkeys_fn,
    ctx: *mut c_void,
    max_problems: usize,
    problems: *mut u64,
    report: *mut *mut c_char,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        with_session(session, errmsg, |s| {
            // SAFETY: forwarded contract.
            let count_out = Out::new(problems, "problems")?;
            count_out.set(0);
            // SAFETY: forwarded contract.
            let report_out = Out::new(report, "report")?;
            report_out.set(std::ptr::null_mut());
            // SAFETY: forwarded contract.
            let t = &arg_ref(table, "table")?.table;
            let Some(f) = keys_fn else {
                return Err(Error::invalid_argument("parameter `keys_fn` is NULL").into());
            };
            let n = t.secondary_count();
            let mut scratch = vec![
                riptide_hkey_t {
                    data: std::ptr::null(),
                    len: 0,
                    has_null: false,
                };
                n
            ];
            let mut keys_of =
                |pk: &[u8], row: &[u8]| -> Result<Option<Vec<Vec<u8>>>, HandlerError> {
                    // SAFETY: `pk` and `row` are readable for their lengths during the call,
                    // `scratch` holds `n` writable keys, and the callback honours its contract.
                    let ok = f(
                        ctx,
                        pk.as_ptr().cast(),
                        pk.len(),
                        row.as_ptr().cast(),
                        row.len(),
                        scratch.as_mut_ptr(),
                        n,
                    );
                    if !ok {
                        return Ok(None);
                    }
                    // SAFETY: the callback filled `n` keys whose bytes stay valid until it is
                    // called again; they are copied here.
                    let keys = sec_keys(scratch.as_ptr(), n)?;
                    Ok(Some(keys.iter().map(|k| k.key.to_vec()).collect()))
                };
            let r = s.check_table(t, &mut keys_of, max_problems)?;
            count_out.set(r.problem_count);
            if !r.problems.is_empty() {
                let text: String = r.problems.iter().map(|p| format!("{p}\n")).collect();
                report_out.set(malloc_string(&text)?);
            }
            Ok(())
        })
    }
}
