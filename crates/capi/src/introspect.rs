//! What a DBA looks at when something waits: the open transactions of a database
//! (`riptide_db_transactions`), the locks of the handler layer's sessions
//! (`riptide_handler_locks`) and the running and recent flushes and compactions
//! (`riptide_db_background_jobs`), each as an opaque list read with `_count` / `_at` and freed
//! with `_destroy`. The MariaDB plugin shows them as `information_schema.RIPTIDE_TRX`,
//! `RIPTIDE_LOCKS` and `RIPTIDE_COMPACTIONS`.

use std::ffi::{CString, c_char};
use std::ops::Bound;

use riptide::{Concurrency, IsolationLevel, LockMode, TransactionInfo};
use riptide_handler::HandlerLock;

use crate::db::riptide_db_t;
use crate::ffi_util::{ErrMsg, Out, arg_mut, arg_ref, destroy_handle, into_handle};
use crate::handler_engine::riptide_handler_t;
use crate::handler_session::{riptide_hsession_t, with_session};
use crate::handler_util::hguard;
use crate::status::riptide_status_t;

/// A bound of a key range in `riptide_lock_info_t`: no bound (the range is open on that
/// side).
pub const RIPTIDE_BOUND_UNBOUNDED: i32 = 0;
/// The bound's key is in the range.
pub const RIPTIDE_BOUND_INCLUDED: i32 = 1;
/// The bound's key is not in the range.
pub const RIPTIDE_BOUND_EXCLUDED: i32 = 2;

/// A count `riptide_trx_info_t` does not know (the transaction stayed busy while it was
/// read: a commit writing a large batch).
pub const RIPTIDE_UNKNOWN: i64 = -1;

/// One open transaction (see `riptide_db_transactions`). Strings are NUL-terminated and
/// live as long as their list.
#[repr(C)]
#[derive(Debug)]
pub struct riptide_trx_info_t {
    /// Its id (the owner id of its locks in `riptide_lock_info_t`).
    pub id: u64,
    /// Who runs it (MariaDB: the connection id; `riptide_hsession_set_owner`); 0 for none.
    pub owner: u64,
    /// `ACTIVE` or `PREPARED`.
    pub state: *const c_char,
    /// `READ COMMITTED`, `REPEATABLE READ` or `SERIALIZABLE`.
    pub isolation: *const c_char,
    /// Whether it is optimistic (validated at commit) rather than pessimistic (row locks).
    pub optimistic: bool,
    /// Milliseconds since it began.
    pub age_ms: u64,
    /// Whether it took its read snapshot; `snapshot_seqno` is meaningful only then.
    pub has_snapshot: bool,
    /// The sequence number its reads see.
    pub snapshot_seqno: u64,
    /// Keys in its write buffer, or `RIPTIDE_UNKNOWN`.
    pub writes: i64,
    /// Approximate bytes of its write buffer, or `RIPTIDE_UNKNOWN`.
    pub write_set_bytes: i64,
    /// Row locks it holds, or `RIPTIDE_UNKNOWN`.
    pub row_locks: i64,
}

/// The open transactions of a database (opaque): made by `riptide_db_transactions`, read
/// with `riptide_trx_list_count` / `riptide_trx_list_at`, freed by
/// `riptide_trx_list_destroy`.
pub struct riptide_trx_list_t {
    rows: Vec<riptide_trx_info_t>,
    /// The strings the rows point into (static ones are not kept).
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers in `rows` point into `_strings` (owned by the list, never
// changed after construction) or to static strings; nothing is shared mutably.
unsafe impl Send for riptide_trx_list_t {}

fn isolation_name(level: IsolationLevel) -> &'static std::ffi::CStr {
    match level {
        IsolationLevel::ReadCommitted => c"READ COMMITTED",
        IsolationLevel::RepeatableRead => c"REPEATABLE READ",
        IsolationLevel::Serializable => c"SERIALIZABLE",
    }
}

fn count_or_unknown(v: Option<u64>) -> i64 {
    v.map_or(RIPTIDE_UNKNOWN, |n| i64::try_from(n).unwrap_or(i64::MAX))
}

impl riptide_trx_list_t {
    fn new(list: &[TransactionInfo]) -> Self {
        let rows = list
            .iter()
            .map(|t| riptide_trx_info_t {
                id: t.id,
                owner: t.owner,
                state: match t.state {
                    riptide::TransactionState::Active => c"ACTIVE".as_ptr(),
                    riptide::TransactionState::Prepared => c"PREPARED".as_ptr(),
                },
                isolation: isolation_name(t.isolation).as_ptr(),
                optimistic: t.concurrency == Concurrency::Optimistic,
                age_ms: u64::try_from(t.age.as_millis()).unwrap_or(u64::MAX),
                has_snapshot: t.snapshot.is_some(),
                snapshot_seqno: t.snapshot.unwrap_or(0),
                writes: count_or_unknown(t.writes),
                write_set_bytes: count_or_unknown(t.write_set_bytes),
                row_locks: count_or_unknown(t.row_locks),
            })
            .collect();
        riptide_trx_list_t {
            rows,
            _strings: Vec::new(),
        }
    }
}

/// Lists the open transactions of `db` (active ones, and prepared ones whose handle is
/// still held), by id, into `*list` (free with `riptide_trx_list_destroy`).
///
/// # Safety
///
/// `db` is NULL or a live database handle; `list` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_transactions(
    db: *mut riptide_db_t,
    list: *mut *mut riptide_trx_list_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameters `list` and `errmsg`.
    let (db, out, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            Out::new(list, "list"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let txns = db?.with(|d| Ok(d.transactions()))?;
        out.set(into_handle(riptide_trx_list_t::new(&txns)));
        Ok(())
    })
}

/// How many transactions `list` holds (0 for NULL).
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_trx_list_count(list: *const riptide_trx_list_t) -> usize {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe { crate::ffi_util::query(list, 0, |l| l.rows.len()) }
}

/// Transaction `index` of `list` (NULL past the end, or for a NULL list); it lives as long
/// as the list.
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_trx_list_at(
    list: *const riptide_trx_list_t,
    index: usize,
) -> *const riptide_trx_info_t {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe {
        crate::ffi_util::query(list, std::ptr::null(), |l| {
            l.rows
                .get(index)
                .map_or(std::ptr::null(), |r| r as *const _)
        })
    }
}

/// Frees a list of `riptide_db_transactions` (NULL: nothing).
///
/// # Safety
///
/// `list` is NULL or a live list, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_trx_list_destroy(list: *mut riptide_trx_list_t) {
    // SAFETY: per `# Safety`, `list` follows the freed handle rule.
    unsafe { destroy_handle(list) }
}

/// One lock held, or one lock request waiting (see `riptide_handler_locks`). Strings are
/// NUL-terminated (NULL where noted) and, like the key bytes and `blocked_by`, live as long
/// as their list.
#[repr(C)]
#[derive(Debug)]
pub struct riptide_lock_info_t {
    /// The transaction that holds or waits (`riptide_trx_info_t.id`).
    pub txn: u64,
    /// Its owner (MariaDB: the connection id); 0 when unknown.
    pub owner: u64,
    /// `RECORD` (a row by its key in an index), `UNIQUE_VALUE` (a value of a UNIQUE
    /// index, locked for its duplicate check), `TABLE_WRITE` (a table's write lock: shared
    /// by writers, exclusive for a bulk load's ingest), `GAP` (a key range),
    /// `INSERT_INTENTION` (an insert waiting for a gap lock) or `OTHER`.
    pub lock_type: *const c_char,
    /// `S` or `X`; NULL for gap locks and insert intentions.
    pub mode: *const c_char,
    /// The table's name as the caller created it (MariaDB: `./db/table`); NULL if unknown.
    pub table: *const c_char,
    /// The index's name; NULL if unknown or not an index's key (`TABLE_WRITE`).
    pub index: *const c_char,
    /// `RIPTIDE_BOUND_*` of `start`: included for a key.
    pub start_bound: i32,
    /// The key (or the range's start), without its index id; NULL with length 0 when
    /// unbounded.
    pub start: *const u8,
    /// Length of `start`.
    pub start_len: usize,
    /// `RIPTIDE_BOUND_*` of `end`.
    pub end_bound: i32,
    /// The range's end (the key again for a row lock).
    pub end: *const u8,
    /// Length of `end`.
    pub end_len: usize,
    /// Whether this is a request waiting (not a lock held).
    pub waiting: bool,
    /// How long it has waited, in milliseconds (0 for a held lock).
    pub waiting_ms: u64,
    /// The transactions a waiting request waits for (`blocked_by_count` ids); NULL when
    /// none.
    pub blocked_by: *const u64,
    /// Number of ids in `blocked_by`.
    pub blocked_by_count: usize,
}

/// The locks of a handler layer's sessions (opaque): made by `riptide_handler_locks`, read
/// with `riptide_lock_list_count` / `riptide_lock_list_at`, freed by
/// `riptide_lock_list_destroy`.
pub struct riptide_lock_list_t {
    rows: Vec<riptide_lock_info_t>,
    /// Owned storage the rows point into: names, keys and blocker ids, boxed so their
    /// addresses stay put.
    _strings: Vec<CString>,
    _bytes: Vec<Box<[u8]>>,
    _ids: Vec<Box<[u64]>>,
    truncated: bool,
}

// SAFETY: the raw pointers in `rows` point into the list's own boxed storage (never changed
// after construction) or to static strings; nothing is shared mutably.
unsafe impl Send for riptide_lock_list_t {}

impl riptide_lock_list_t {
    fn new(locks: Vec<HandlerLock>, truncated: bool) -> Self {
        let mut list = riptide_lock_list_t {
            rows: Vec::with_capacity(locks.len()),
            _strings: Vec::new(),
            _bytes: Vec::new(),
            _ids: Vec::new(),
            truncated,
        };
        for l in locks {
            let table = list.string(l.table);
            let index = list.string(l.index);
            let (start_bound, start, start_len) = list.bound(l.start);
            let (end_bound, end, end_len) = list.bound(l.end);
            let (blocked_by, blocked_by_count) = if l.blocked_by.is_empty() {
                (std::ptr::null(), 0)
            } else {
                let ids: Box<[u64]> = l.blocked_by.into_boxed_slice();
                let p = (ids.as_ptr(), ids.len());
                list._ids.push(ids);
                p
            };
            list.rows.push(riptide_lock_info_t {
                txn: l.txn,
                owner: l.owner,
                lock_type: lock_type_name(l.target).as_ptr(),
                mode: match l.mode {
                    Some(LockMode::Shared) => c"S".as_ptr(),
                    Some(LockMode::Exclusive) => c"X".as_ptr(),
                    None => std::ptr::null(),
                },
                table,
                index,
                start_bound,
                start,
                start_len,
                end_bound,
                end,
                end_len,
                waiting: l.waiting.is_some(),
                waiting_ms: l
                    .waiting
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                blocked_by,
                blocked_by_count,
            });
        }
        list
    }

    /// A C copy of `s` kept by the list (NULL for none; a name with a NUL byte is cut there).
    fn string(&mut self, s: Option<String>) -> *const c_char {
        let Some(s) = s else {
            return std::ptr::null();
        };
        let cut = s.split('\0').next().unwrap_or_default().to_string();
        let c = CString::new(cut).unwrap_or_default();
        let p = c.as_ptr();
        self._strings.push(c);
        p
    }

    /// `(RIPTIDE_BOUND_*, bytes, length)` of `b`, the bytes kept by the list.
    fn bound(&mut self, b: Bound<Vec<u8>>) -> (i32, *const u8, usize) {
        let (kind, key) = match b {
            Bound::Unbounded => return (RIPTIDE_BOUND_UNBOUNDED, std::ptr::null(), 0),
            Bound::Included(k) => (RIPTIDE_BOUND_INCLUDED, k),
            Bound::Excluded(k) => (RIPTIDE_BOUND_EXCLUDED, k),
        };
        let key: Box<[u8]> = key.into_boxed_slice();
        let p = (kind, key.as_ptr(), key.len());
        self._bytes.push(key);
        p
    }
}

fn lock_type_name(t: riptide_handler::LockTarget) -> &'static std::ffi::CStr {
    use riptide_handler::LockTarget as T;
    match t {
        T::Record => c"RECORD",
        T::UniqueValue => c"UNIQUE_VALUE",
        T::TableWrite => c"TABLE_WRITE",
        T::Gap => c"GAP",
        T::InsertIntention => c"INSERT_INTENTION",
        T::Other => c"OTHER",
    }
}

/// Lists the locks held and the lock requests waiting now, at most `limit` (0: no limit),
/// each with its table, index and owner, into `*list` (free with `riptide_lock_list_destroy`;
/// `riptide_lock_list_truncated` says whether more existed). Each stripe of the lock table
/// is read under its own mutex in turn: not one atomic picture while transactions run.
///
/// # Safety
///
/// `handler` is NULL or a live handler handle; `list` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_handler_locks(
    handler: *mut riptide_handler_t,
    limit: usize,
    list: *mut *mut riptide_lock_list_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `handler` and the
    // out-parameters `list` and `errmsg`.
    let (handler, out, errmsg) = unsafe {
        (
            arg_ref(handler, "handler"),
            Out::new(list, "list"),
            ErrMsg::new(errmsg),
        )
    };
    hguard(errmsg, || {
        let out = out?;
        out.set(std::ptr::null_mut());
        let h = handler?;
        let limit = if limit == 0 { usize::MAX } else { limit };
        let (locks, truncated) = h.engine.lock_table(limit)?;
        out.set(into_handle(riptide_lock_list_t::new(locks, truncated)));
        Ok(())
    })
}

/// How many locks `list` holds (0 for NULL).
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_lock_list_count(list: *const riptide_lock_list_t) -> usize {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe { crate::ffi_util::query(list, 0, |l| l.rows.len()) }
}

/// Whether more locks existed than the `limit` the list was made with (false for NULL).
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_lock_list_truncated(list: *const riptide_lock_list_t) -> bool {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe { crate::ffi_util::query(list, false, |l| l.truncated) }
}

/// Lock `index` of `list` (NULL past the end, or for a NULL list); it lives as long as the
/// list.
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_lock_list_at(
    list: *const riptide_lock_list_t,
    index: usize,
) -> *const riptide_lock_info_t {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe {
        crate::ffi_util::query(list, std::ptr::null(), |l| {
            l.rows
                .get(index)
                .map_or(std::ptr::null(), |r| r as *const _)
        })
    }
}

/// Frees a list of `riptide_handler_locks` (NULL: nothing).
///
/// # Safety
///
/// `list` is NULL or a live list, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_lock_list_destroy(list: *mut riptide_lock_list_t) {
    // SAFETY: per `# Safety`, `list` follows the freed handle rule.
    unsafe { destroy_handle(list) }
}

/// Sets who runs the session's transaction (MariaDB: the connection id), as
/// `riptide_db_transactions` and `riptide_handler_locks` show it from now on.
///
/// # Safety
///
/// `session` is NULL or a live session handle used by this thread alone; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_hsession_set_owner(
    session: *mut riptide_hsession_t,
    owner: u64,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the exclusive handle `session`
    // and the out-parameter `errmsg`.
    let (session, errmsg) = unsafe { (arg_mut(session, "session"), ErrMsg::new(errmsg)) };
    with_session(session, errmsg, |s| {
        s.set_owner(owner);
        Ok(())
    })
}

/// One flush or compaction (see `riptide_db_background_jobs`). Strings are NUL-terminated
/// and live as long as their list.
#[repr(C)]
#[derive(Debug)]
pub struct riptide_job_info_t {
    /// Counts up from 1 per open database.
    pub id: u64,
    /// `FLUSH` or `COMPACTION`.
    pub kind: *const c_char,
    /// The column family's name.
    pub cf: *const c_char,
    /// `frozen memtable` (flush), `L0 file count`, `level size`, `tombstone density` or
    /// `manual`.
    pub reason: *const c_char,
    /// The levels read, comma-separated (`1,2`); empty for a flush.
    pub input_levels: *const c_char,
    /// The level written.
    pub output_level: u32,
    /// Input files (0 for a flush).
    pub input_files: u64,
    /// Bytes read: the input files, or the memtable's memory for a flush.
    pub input_bytes: u64,
    /// Bytes written once finished; `RIPTIDE_UNKNOWN` while running or after a failure.
    pub output_bytes: i64,
    /// `RUNNING`, `DONE` or `FAILED`.
    pub state: *const c_char,
    /// The error of a failed job; NULL otherwise.
    pub error: *const c_char,
    /// Milliseconds since it started.
    pub age_ms: u64,
    /// Milliseconds it ran once finished; `RIPTIDE_UNKNOWN` while running.
    pub duration_ms: i64,
}

/// The running and recent background jobs of a database (opaque): made by
/// `riptide_db_background_jobs`, read with `riptide_job_list_count` / `riptide_job_list_at`,
/// freed by `riptide_job_list_destroy`.
pub struct riptide_job_list_t {
    rows: Vec<riptide_job_info_t>,
    /// The strings the rows point into.
    _strings: Vec<CString>,
}

// SAFETY: the raw pointers in `rows` point into `_strings` (owned by the list, never
// changed after construction) or to static strings; nothing is shared mutably.
unsafe impl Send for riptide_job_list_t {}

impl riptide_job_list_t {
    fn new(jobs: &[riptide::JobInfo]) -> Self {
        let mut strings: Vec<CString> = Vec::new();
        let mut keep = |s: &str| -> *const c_char {
            let c = CString::new(s.replace('\0', " ")).unwrap_or_default();
            let p = c.as_ptr();
            strings.push(c);
            p
        };
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let rows = jobs
            .iter()
            .map(|j| riptide_job_info_t {
                id: j.id,
                kind: match j.kind {
                    riptide::JobKind::Flush => c"FLUSH".as_ptr(),
                    riptide::JobKind::Compaction => c"COMPACTION".as_ptr(),
                },
                cf: keep(&j.cf),
                reason: keep(j.reason),
                input_levels: keep(
                    &j.input_levels
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                output_level: u32::try_from(j.output_level).unwrap_or(u32::MAX),
                input_files: j.input_files as u64,
                input_bytes: j.input_bytes,
                output_bytes: count_or_unknown(j.output_bytes),
                state: match j.state {
                    riptide::JobState::Running => c"RUNNING".as_ptr(),
                    riptide::JobState::Done => c"DONE".as_ptr(),
                    riptide::JobState::Failed(_) => c"FAILED".as_ptr(),
                },
                error: match &j.state {
                    riptide::JobState::Failed(e) => keep(e),
                    _ => std::ptr::null(),
                },
                age_ms: ms(j.age),
                duration_ms: count_or_unknown(j.duration.map(ms)),
            })
            .collect();
        riptide_job_list_t {
            rows,
            _strings: strings,
        }
    }
}

/// Lists the flushes and compactions of `db` running now (oldest first), then the last 100
/// finished (newest first), into `*list` (free with `riptide_job_list_destroy`).
///
/// # Safety
///
/// `db` is NULL or a live database handle; `list` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_background_jobs(
    db: *mut riptide_db_t,
    list: *mut *mut riptide_job_list_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameters `list` and `errmsg`.
    let (db, out, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            Out::new(list, "list"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let jobs = db?.with(|d| Ok(d.background_jobs()))?;
        out.set(into_handle(riptide_job_list_t::new(&jobs)));
        Ok(())
    })
}

/// How many jobs `list` holds (0 for NULL).
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_job_list_count(list: *const riptide_job_list_t) -> usize {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe { crate::ffi_util::query(list, 0, |l| l.rows.len()) }
}

/// Job `index` of `list` (NULL past the end, or for a NULL list); it lives as long as the
/// list.
///
/// # Safety
///
/// `list` is NULL or a live list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_job_list_at(
    list: *const riptide_job_list_t,
    index: usize,
) -> *const riptide_job_info_t {
    // SAFETY: `list` is NULL or a live list, per this function's contract.
    unsafe {
        crate::ffi_util::query(list, std::ptr::null(), |l| {
            l.rows
                .get(index)
                .map_or(std::ptr::null(), |r| r as *const _)
        })
    }
}

/// Frees a list of `riptide_db_background_jobs` (NULL: nothing).
///
/// # Safety
///
/// `list` is NULL or a live list, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_job_list_destroy(list: *mut riptide_job_list_t) {
    // SAFETY: per `# Safety`, `list` follows the freed handle rule.
    unsafe { destroy_handle(list) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_lists_are_empty() {
        // SAFETY: NULL is allowed for every accessor and destroy.
        unsafe {
            assert_eq!(riptide_trx_list_count(std::ptr::null()), 0);
            assert!(riptide_trx_list_at(std::ptr::null(), 0).is_null());
            riptide_trx_list_destroy(std::ptr::null_mut());
            assert_eq!(riptide_lock_list_count(std::ptr::null()), 0);
            assert!(!riptide_lock_list_truncated(std::ptr::null()));
            assert!(riptide_lock_list_at(std::ptr::null(), 0).is_null());
            riptide_lock_list_destroy(std::ptr::null_mut());
            assert_eq!(riptide_job_list_count(std::ptr::null()), 0);
            assert!(riptide_job_list_at(std::ptr::null(), 0).is_null());
            riptide_job_list_destroy(std::ptr::null_mut());
        }
    }
}
