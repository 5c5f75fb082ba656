//! `riptide_hsession_t`: a connection's session of the handler layer (one pessimistic
//! transaction; statement and SQL savepoints; KILL), its row operations (insert, update,
//! delete with unique checks; point reads; unlocking a row a read did not want) and CHECK
//! TABLE. Index reads go through cursors (`handler_cursor.rs`).

use std::ffi::{c_char, c_void};
use std::time::Duration;

use riptide::{Error, InterruptHandle, LockedRead};
use riptide_handler::{HandlerError, HeldBulkLoad, Isolation, Session, SessionOptions};

use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_mut, arg_opt_mut, arg_ref, bytes, destroy_handle, into_handle,
    null_arg, query,
};
use crate::handler_cursor::riptide_hcursor_t;
use crate::handler_engine::riptide_handler_t;
use crate::handler_table::riptide_htable_t;
use crate::handler_util::{HKeys, hguard, hguard_dup, row_lock};
use crate::kv::ValueOut;
use crate::memory::malloc_string;
use crate::status::riptide_status_t;
use crate::xid::xid;

/// Row lock mode of `riptide_hsession_get_row`: a plain read.
pub const RIPTIDE_ROW_LOCK_NONE: i32 = 0;

/// Row lock mode: shared (`LOCK IN SHARE MODE`).
pub const RIPTIDE_ROW_LOCK_SHARED: i32 = 1;

/// Row lock mode: exclusive (`FOR UPDATE`, reads of writing statements).
pub const RIPTIDE_ROW_LOCK_EXCLUSIVE: i32 = 2;

/// Row lock mode: shared, never waiting (`LOCK IN SHARE MODE SKIP LOCKED`). With
/// `riptide_hsession_get_row`, a row another session holds in a conflicting mode is
/// reported as `RIPTIDE_BUSY` (skip it). Cursors have modes of the same values
/// (`RIPTIDE_HCURSOR_SHARED_SKIP_LOCKED`), which step over such rows.
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
/// One thread at a time: a call that takes a session needs it used by the calling thread
/// alone (most calls change it); it may move to another thread between calls. (The Rust type
/// is `Send` and `Sync`, but the ABI passes a session as an exclusive handle.) Cursors that
/// read through it may be destroyed before or after it.
pub struct riptide_hsession_t {
    pub(crate) session: Session,
}

/// An interrupter of one session's lock waits (opaque): made by
/// `riptide_hsession_interrupter`, freed by `riptide_hinterrupt_destroy`. Thread-safe (`Send`
/// and `Sync`):
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
/// `handler` is NULL or a live handler handle; `session` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin(
    handler: *mut riptide_handler_t,
    isolation: i32,
    lock_timeout_ms: u64,
    session: *mut *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `session`
    // and `errmsg` and the handle `handler`.
    let (out, handler, errmsg) = unsafe {
        (
            Out::new(session, "session"),
            arg_ref(handler, "handler"),
            ErrMsg::new(errmsg),
        )
    };
    begin_session(out, handler, isolation, lock_timeout_ms, false, errmsg)
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `session`
    // and `errmsg` and the handle `handler`.
    let (out, handler, errmsg) = unsafe {
        (
            Out::new(session, "session"),
            arg_ref(handler, "handler"),
            ErrMsg::new(errmsg),
        )
    };
    begin_session(out, handler, isolation, lock_timeout_ms, true, errmsg)
}

/// Whether the session has taken its read snapshot (at begin with
/// `riptide_hsession_begin_snapshot`, else at its first read under repeatable read); false
/// for NULL.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_has_snapshot(session: *const riptide_hsession_t) -> bool {
    // SAFETY: per `# Safety`, `session` follows the exclusive handle rule of the ffi_util
    // contract, which includes the handle rule `query` needs.
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
/// `session` is NULL or a live session handle used by this thread alone; `interrupter` and
/// `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_interrupter(
    session: *const riptide_hsession_t,
    interrupter: *mut *mut riptide_hinterrupt_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters
    // `interrupter` and `errmsg` and the exclusive handle `session` (only read here: the
    // handle rule `arg_ref` needs is part of it).
    let (out, session, errmsg) = unsafe {
        (
            Out::new(interrupter, "interrupter"),
            arg_ref(session, "session"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let s = &session?.session;
        out.set(into_handle(riptide_hinterrupt_t {
            handle: s.interrupt_handle(),
        }));
        Ok(())
    })
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
/// `interrupter` is NULL or a live interrupter handle, not destroyed during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_fire(interrupter: *const riptide_hinterrupt_t) {
    // SAFETY: per `# Safety`, `interrupter` follows the handle rule of the ffi_util contract
    // (an interrupter is `Sync`: other threads may fire it at the same time).
    unsafe { query(interrupter, (), |h| h.handle.interrupt()) }
}

/// Frees an interrupter (its session is not affected; an interrupt it fired stays in force
/// until `riptide_hsession_clear_interrupt`). NULL is a no-op.
///
/// # Safety
///
/// `interrupter` is NULL or a live interrupter handle that no thread uses during or after
/// the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hinterrupt_destroy(interrupter: *mut riptide_hinterrupt_t) {
    // SAFETY: per `# Safety`, `interrupter` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_hsession_interrupter` and never used again.
    unsafe { destroy_handle(interrupter) }
}

/// Re-arms the session after `riptide_hinterrupt_fire`: its lock waits wait normally again.
/// MariaDB: at the start of each statement, so that a `KILL QUERY` that arrived just before
/// a wait began is not lost within its statement, and does not outlive it. NULL is a no-op.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_clear_interrupt(session: *mut riptide_hsession_t) {
    // SAFETY: per `# Safety`, `session` follows the exclusive handle rule of the ffi_util
    // contract, which includes the handle rule `query` needs.
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
/// `session` is NULL or a live session handle used by this thread alone; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_lock_timeout(
    session: *mut riptide_hsession_t,
    timeout_ms: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        s.set_lock_timeout(Duration::from_millis(timeout_ms));
        Ok(())
    })
}

/// Turns bulk load on (`on` nonzero) or off for the session's inserts from now on (MariaDB:
/// the session variable `riptide_bulk_load`, applied at each statement's start). With it
/// on, the rows the transaction inserts are sorted on the side; at commit, those that fill
/// vacant key ranges (an empty table, appends) are ingested as table files, checked for
/// duplicates among themselves, and the others are written the ordinary way
/// (`riptide_hsession_commit` fails with `RIPTIDE_DUPLICATE_KEY` on a duplicate and writes
/// nothing of the transaction); they are not visible before. See `riptide_handler::bulk` for which tables take
/// that path and what it does not support (two-phase commit: `riptide_hsession_prepare`
/// refuses a transaction holding a bulk load).
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_bulk_load(
    session: *mut riptide_hsession_t,
    on: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        s.set_bulk_load(on);
        Ok(())
    })
}

/// A bulk load between transactions (opaque): taken out of a session by
/// `riptide_hsession_detach_bulk_load`, given to another by
/// `riptide_hsession_attach_bulk_load`, or freed (its rows discarded) by
/// `riptide_hbulk_destroy`. Holds the load's sorted rows (memory up to the engine's
/// `sort_buffer_size`, then temporary files). `Send`: it may move between threads.
pub struct riptide_hbulk_t {
    held: HeldBulkLoad,
}

/// Takes the session's bulk load out of its transaction before it commits, so that the
/// load goes on in a later transaction (the MariaDB plugin: autocommit statements with
/// `riptide_bulk_load` on form one load, which ends when the variable returns to 0, at the
/// connection's next statement of another kind, or when it closes). `*bulk` is set to the
/// load, or to NULL when the transaction holds no loaded row. The transaction then commits
/// or rolls back without it; the load's rows stay invisible until a transaction it is
/// attached to commits. See `riptide_handler::bulk`.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `bulk` and
/// `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_detach_bulk_load(
    session: *mut riptide_hsession_t,
    bulk: *mut *mut riptide_hbulk_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameters `bulk` and `errmsg`.
    let (session, out, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            Out::new(bulk, "bulk"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let (session, out) = (session?, out?);
        let held = session.session.detach_bulk_load();
        out.set(held.map_or(std::ptr::null_mut(), |held| {
            into_handle(riptide_hbulk_t { held })
        }));
        Ok(())
    })
}

/// Gives the session a bulk load taken out of an earlier one: the session's inserts into
/// the load's tables join it, and its commit writes the whole load (all or nothing, with
/// the session's own writes; a failed commit or a rollback discards it). The session takes
/// `bulk` whatever the outcome: do not use or destroy it afterwards. Fails
/// (`RIPTIDE_INVALID_ARGUMENT`, the load's rows discarded) if the session holds loaded rows
/// of its own.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `bulk` is NULL or
/// a live bulk load handle, not used afterwards; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_attach_bulk_load(
    session: *mut riptide_hsession_t,
    bulk: *mut riptide_hbulk_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    let held = if bulk.is_null() {
        None
    } else {
        // SAFETY: per `# Safety`, a non-NULL `bulk` is a live handle made by `into_handle`
        // (`riptide_hsession_detach_bulk_load`) that the caller gives up: it is taken back
        // exactly once, here.
        Some(unsafe { Box::from_raw(bulk) }.held)
    };
    hguard(errmsg, || {
        let session = session?;
        let held = held.ok_or_else(|| null_arg("bulk"))?;
        session.session.attach_bulk_load(held)
    })
}

/// Rows a held bulk load holds; 0 for NULL.
///
/// # Safety
///
/// `bulk` is NULL or a live bulk load handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbulk_rows(bulk: *const riptide_hbulk_t) -> u64 {
    // SAFETY: per `# Safety`, `bulk` follows the handle rule `query` needs.
    unsafe { query(bulk, 0, |b| b.held.rows()) }
}

/// Frees a held bulk load, discarding its rows (and its temporary files). NULL is a no-op.
///
/// # Safety
///
/// `bulk` is NULL or a live bulk load handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hbulk_destroy(bulk: *mut riptide_hbulk_t) {
    // SAFETY: per `# Safety`, `bulk` follows the freed handle rule of the ffi_util contract.
    unsafe { destroy_handle(bulk) }
}

/// Bytes the session's transaction holds in memory for its writes and locks (keys, values,
/// undo and lock records; `riptide::Transaction::approximate_memory`); 0 for NULL. The
/// MariaDB plugin asks before a commit or rollback, to hand a big transaction's freed memory
/// back to the system afterwards.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_approximate_memory(
    session: *const riptide_hsession_t,
) -> usize {
    // SAFETY: per `# Safety`, `session` follows the exclusive handle rule of the ffi_util
    // contract, which includes the handle rule `query` needs.
    unsafe { query(session, 0, |s| s.session.transaction().approximate_memory()) }
}

/// The body of `riptide_hsession_begin` and `riptide_hsession_begin_snapshot`, over their
/// converted parameters.
fn begin_session(
    out: CResult<Out<*mut riptide_hsession_t>>,
    handler: CResult<&riptide_handler_t>,
    isolation: i32,
    lock_timeout_ms: u64,
    snapshot_at_begin: bool,
    errmsg: ErrMsg,
) -> riptide_status_t {
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let h = handler?;
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

/// Frees a session, rolling back an unfinished transaction. NULL is a no-op.
///
/// # Safety
///
/// `session` is NULL or a live session handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_destroy(session: *mut riptide_hsession_t) {
    // SAFETY: per `# Safety`, `session` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_hsession_begin*` and never used again.
    unsafe { destroy_handle(session) }
}

/// Runs `f` on the session behind the converted exclusive handle `session`, under
/// [`hguard`].
pub(crate) fn with_session(
    session: CResult<&mut riptide_hsession_t>,
    errmsg: ErrMsg,
    f: impl FnOnce(&mut Session) -> Result<(), HandlerError>,
) -> riptide_status_t {
    hguard(errmsg, || f(&mut session?.session))
}

/// Whether the session's commit waits for the WAL sync when `riptide_sync_mode` is full
/// (`sync`, the default) or only writes its commit record, which the next sync makes
/// durable (`riptide_db_sync_wal`, a later synced commit, a WAL rotation). For the commit
/// after two-phase commit with MariaDB's binary log, whose recovery commits a prepared
/// transaction again by its xid. Never fails on a live session.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_commit_sync(
    session: *mut riptide_hsession_t,
    sync: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        s.set_commit_sync(sync);
        Ok(())
    })
}

/// Commits the session's transaction (all tables and indexes in one atomic batch). The
/// session is finished afterwards, success or not: destroy it.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_commit(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, Session::commit)
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
/// `session` is NULL or a live session handle used by this thread alone; `(gtrid,
/// gtrid_len)` and `(bqual, bqual_len)` are NULL or their length in readable bytes; `errmsg`
/// is NULL or writable.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the byte strings `gtrid` and `bqual` and the out-parameter `errmsg`.
    let (session, gtrid, bqual, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            bytes(gtrid, gtrid_len, "gtrid"),
            bytes(bqual, bqual_len, "bqual"),
            ErrMsg::new(errmsg),
        )
    };
    with_session(session, errmsg, |s| {
        s.prepare(&xid(format_id, gtrid, bqual)?)
    })
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, Session::rollback)
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
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_begin_statement(
    session: *mut riptide_hsession_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, Session::begin_statement)
}

/// Ends the open statement: keeps its writes (`success`) or undoes them (and the
/// savepoints and locks taken since it began). A no-op without one.
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_end_statement(
    session: *mut riptide_hsession_t,
    success: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| s.end_statement(success))
}

/// SQL `SAVEPOINT`: sets a savepoint the caller names `id` (MariaDB: one number per
/// savepoint it keeps).
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_set(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| s.set_named_savepoint(id))
}

/// SQL `ROLLBACK TO SAVEPOINT`: undoes everything since savepoint `id` (the savepoints set
/// after it go; `id` stays), releasing the row locks taken since. `RIPTIDE_NOT_FOUND` if no
/// open savepoint has that id.
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_rollback(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        if s.rollback_to_named_savepoint(id)? {
            return Ok(());
        }
        Err(Error::not_found(format!("savepoint {id} is not open")).into())
    })
}

/// SQL `RELEASE SAVEPOINT` (and MariaDB's release of an older savepoint of a name a new
/// `SAVEPOINT` reuses): forgets savepoint `id`, keeping its writes and the savepoints set
/// after it. `RIPTIDE_NOT_FOUND` if no open savepoint has that id.
///
/// # Safety
///
/// As `riptide_hsession_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_savepoint_release(
    session: *mut riptide_hsession_t,
    id: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        if s.release_named_savepoint(id)? {
            return Ok(());
        }
        Err(Error::not_found(format!("savepoint {id} is not open")).into())
    })
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
/// `session` is NULL or a live session handle used by this thread alone; `table` is NULL or
/// a live table handle; `(pk, pk_len)` and `(row, row_len)` are NULL or their length in
/// readable bytes; `(keys, nkeys)` is NULL with `nkeys` 0 or `nkeys` readable keys, each
/// `(data, len)` NULL or `len` readable bytes; `hidden_ref` is NULL or writable for 8 bytes;
/// `dup_index` and `errmsg` are NULL or writable.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the handle `table`, the byte strings `pk` and `row`, the array `keys`, and the optional
    // out-parameters `dup_index`, `errmsg` and `hidden_ref` (8 writable bytes: one
    // `[u8; 8]`, whose alignment is 1).
    let (session, table, pk, keys, row, hidden_ref, dup, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            arg_ref(table, "table"),
            bytes(pk, pk_len, "pk"),
            HKeys::new(keys, nkeys),
            bytes(row, row_len, "row"),
            Out::optional(hidden_ref.cast::<[u8; 8]>()),
            Out::optional(dup_index),
            ErrMsg::new(errmsg),
        )
    };
    hguard_dup(errmsg, dup, || {
        let (s, t, pk) = (&mut session?.session, &table?.table, pk?);
        let keys = keys?.secondary_keys()?;
        let row = row?;
        if t.has_hidden_pk() && pk.is_empty() {
            let id = s.insert_hidden(t, &keys, row)?;
            if let Some(out) = hidden_ref {
                out.set(id);
            }
            return Ok(());
        }
        s.insert(t, pk, &keys, row)
    })
}

/// Updates a row from (`old_pk`, `old_keys`) to (`new_pk`, `new_keys`, `row`); both key
/// arrays have `nkeys` entries. Unchanged secondary entries are not rewritten. Duplicates
/// as `riptide_hsession_insert`. `scan` is the cursor the statement reads the table with
/// (NULL: none): when the row's entry in the cursor's index moves, the cursor does not
/// return the row again (an UPDATE of a key the scan reads: the Halloween problem).
///
/// # Safety
///
/// As `riptide_hsession_insert`, for `old_pk`, `new_pk`, `old_keys` and `new_keys` as for
/// `pk` and `keys`; `scan` is NULL or a live cursor handle used by this thread alone.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handles `session`
    // and `scan`, the handle `table`, the byte strings `old_pk`, `new_pk` and `row`, the
    // arrays `old_keys` and `new_keys`, and the optional out-parameters `dup_index` and
    // `errmsg`.
    let (session, table, old_pk, new_pk, old_keys, new_keys, row, scan, dup, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            arg_ref(table, "table"),
            bytes(old_pk, old_pk_len, "old_pk"),
            bytes(new_pk, new_pk_len, "new_pk"),
            HKeys::new(old_keys, nkeys),
            HKeys::new(new_keys, nkeys),
            bytes(row, row_len, "row"),
            arg_opt_mut(scan),
            Out::optional(dup_index),
            ErrMsg::new(errmsg),
        )
    };
    hguard_dup(errmsg, dup, || {
        let (s, t) = (&mut session?.session, &table?.table);
        let (old_pk, new_pk) = (old_pk?, new_pk?);
        let old_keys = old_keys?.secondary_keys()?;
        let new_keys = new_keys?.secondary_keys()?;
        let row = row?;
        let scan = scan.map(|c| &mut c.cursor);
        s.update(t, old_pk, &old_keys, new_pk, &new_keys, row, scan)
    })
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the handle `table`, the byte string `pk`, the array `keys` and the out-parameter
    // `errmsg`.
    let (session, table, pk, keys, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            arg_ref(table, "table"),
            bytes(pk, pk_len, "pk"),
            HKeys::new(keys, nkeys),
            ErrMsg::new(errmsg),
        )
    };
    with_session(session, errmsg, |s| {
        let (t, pk) = (&table?.table, pk?);
        let keys = keys?.secondary_keys()?;
        s.delete(t, pk, &keys)
    })
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
/// `session` is NULL or a live session handle used by this thread alone; `table` is NULL or
/// a live table handle; `(pk, pk_len)` is NULL or `pk_len` readable bytes; `value`,
/// `value_len`, `found` and `errmsg` are NULL or writable.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the out-parameters `value`, `value_len`, `found` and `errmsg`, the handle `table` and
    // the byte string `pk`.
    let (session, out, table, pk, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            ValueOut::check(value, value_len, found),
            arg_ref(table, "table"),
            bytes(pk, pk_len, "pk"),
            ErrMsg::new(errmsg),
        )
    };
    // The session is checked before the out-parameters.
    with_session(session, errmsg, |s| {
        let out = out?;
        out.clear();
        let (t, pk) = (&table?.table, pk?);
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

/// InnoDB's `unlock_row` for a row read by primary key (`riptide_hsession_get_row`): under
/// READ COMMITTED (and READ UNCOMMITTED), releases the lock on the row `(pk, pk_len)` of
/// `table` when the statement did not want the row, if the open statement took it (with no
/// statement open: any lock) and the session has not written the row; under REPEATABLE
/// READ and SERIALIZABLE nothing goes. Rows a cursor returned: `riptide_hcursor_unlock_current`.
/// Stores how many locks were released in `*released` (may be NULL).
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `table` is NULL or
/// a live table handle; `(pk, pk_len)` is NULL or `pk_len` readable bytes; `released` and
/// `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_unlock_row(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    pk: *const c_char,
    pk_len: usize,
    released: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the handle `table`, the byte string `pk` and the optional out-parameters `released`
    // and `errmsg`.
    let (session, table, pk, released, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            arg_ref(table, "table"),
            bytes(pk, pk_len, "pk"),
            Out::optional(released),
            ErrMsg::new(errmsg),
        )
    };
    with_session(session, errmsg, |s| {
        let (t, pk) = (&table?.table, pk?);
        let n = s.unlock_row(t, 0, None, pk)?;
        if let Some(out) = released {
            out.set(n);
        }
        Ok(())
    })
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
/// `session` is NULL or a live session handle used by this thread alone; `table` is NULL or
/// a live table handle; `(key, key_len)` is NULL or `key_len` readable bytes; `errmsg` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_lock_value(
    session: *mut riptide_hsession_t,
    table: *const riptide_htable_t,
    index: usize,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the handle `table`, the byte string `key` and the out-parameter `errmsg`.
    let (session, table, key, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            arg_ref(table, "table"),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    with_session(session, errmsg, |s| {
        let (t, key) = (&table?.table, key?);
        s.lock_value(t, index, key)
    })
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
/// `session` is NULL or a live session handle used by this thread alone; `table` is NULL or
/// a live table handle; `keys_fn` is NULL or a callback honouring its contract with `ctx`;
/// `problems`, `report` and `errmsg` are NULL or writable.
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`,
    // the out-parameters `problems`, `report` and `errmsg` and the handle `table`.
    let (session, count_out, report_out, table, errmsg) = unsafe {
        (
            arg_mut(session, "session"),
            Out::new(problems, "problems"),
            Out::new(report, "report"),
            arg_ref(table, "table"),
            ErrMsg::new(errmsg),
        )
    };
    with_session(session, errmsg, |s| {
        let count_out = count_out?;
        count_out.set(0);
        let report_out = report_out?;
        report_out.set(std::ptr::null_mut());
        let t = &table?.table;
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
        let mut keys_of = |pk: &[u8], row: &[u8]| -> Result<Option<Vec<Vec<u8>>>, HandlerError> {
            // SAFETY: per `# Safety`, `f` honours the contract of `riptide_hkeys_fn` with
            // `ctx`; `pk` and `row` are readable for their lengths during the call, and
            // `scratch` holds `n` initialised, writable keys.
            let ok = unsafe {
                f(
                    ctx,
                    pk.as_ptr().cast(),
                    pk.len(),
                    row.as_ptr().cast(),
                    row.len(),
                    scratch.as_mut_ptr(),
                    n,
                )
            };
            if !ok {
                return Ok(None);
            }
            // SAFETY: `scratch` holds `n` readable keys that only this closure writes (it is
            // not written while `keys` lives), and by the callback's contract each key's
            // bytes are NULL or readable and stay valid until it is called again or the
            // check returns: the array rule, for as long as `keys` is used, here, to copy
            // them.
            let keys = unsafe { HKeys::new(scratch.as_ptr(), n) }?;
            Ok(Some(
                keys.secondary_keys()?
                    .iter()
                    .map(|k| k.key.to_vec())
                    .collect(),
            ))
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
