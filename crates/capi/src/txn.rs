//! `riptide_txn_t`: transactions: begin, reads and writes through the transaction,
//! savepoints, two-phase prepare, commit and rollback.

use std::ffi::c_char;

use riptide::{ColumnFamily, Transaction, TransactionOptions};

use crate::cf::riptide_cf_t;
use crate::db::riptide_db_t;
use crate::ffi_util::{
    CResult, ErrMsg, Out, arg_opt, arg_ref, bytes, destroy_handle, into_handle, query,
};
use crate::kv::ValueOut;
use crate::status::riptide_status_t;
use crate::txn_options::riptide_txn_options_t;
use crate::xid::xid;

/// A transaction (opaque). Made by `riptide_txn_begin`, freed by `riptide_txn_destroy`
/// (which rolls back an unfinished transaction; a prepared one stays prepared). Use it from
/// one thread at a time. Its writes are buffered and invisible to others until commit.
pub struct riptide_txn_t {
    pub(crate) txn: Transaction,
    /// The database's default column family, for NULL `cf` arguments.
    pub(crate) default_cf: ColumnFamily,
}

impl riptide_txn_t {
    /// The column family behind an optional handle: NULL is the default one.
    pub(crate) fn cf(&self, cf: Option<&riptide_cf_t>) -> ColumnFamily {
        cf.map_or_else(|| self.default_cf.clone(), |h| h.cf.clone())
    }
}

/// Begins a transaction with `options` (NULL for the defaults; they are copied) and stores
/// it in `*txn`.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `options` is NULL or a live transaction options
/// handle; `txn` is NULL or writable; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_begin(
    db: *mut riptide_db_t,
    options: *const riptide_txn_options_t,
    txn: *mut *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `txn` and
    // `errmsg` and the handles `db` and `options`.
    let (out, db, options, errmsg) = unsafe {
        (
            Out::new(txn, "txn"),
            arg_ref(db, "db"),
            arg_opt(options),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let db = db?;
        let opts = options.map_or_else(TransactionOptions::default, |o| o.opts.clone());
        let handle = db.with(|d| {
            Ok(riptide_txn_t {
                txn: d.begin_transaction(opts)?,
                default_cf: d.default_cf(),
            })
        })?;
        out.set(into_handle(handle));
        Ok(())
    })
}

/// Frees a transaction, rolling it back if it is still active (a prepared transaction stays
/// prepared, to be finished with `riptide_commit_prepared` / `riptide_rollback_prepared`).
/// Destroy its iterators first. NULL is a no-op.
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_destroy(txn: *mut riptide_txn_t) {
    // SAFETY: per `# Safety`, `txn` follows the freed handle rule of the ffi_util contract:
    // NULL or made by `riptide_txn_begin` and never used again.
    unsafe { destroy_handle(txn) }
}

/// The transaction's id (unique within one open database); 0 for NULL.
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_id(txn: *const riptide_txn_t) -> u64 {
    // SAFETY: per `# Safety`, `txn` follows the handle rule of the ffi_util contract.
    unsafe { query(txn, 0, |t| t.txn.id()) }
}

/// Reads `key` in `cf` (NULL: the default column family) as the transaction sees it: its
/// own write if it made one, else the database at its read point. Results as `riptide_get`
/// (`*found`, and a value to free with `riptide_free_value`).
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle; `cf` is NULL or a live column family handle
/// of the transaction's database; `(key, key_len)` is NULL or `key_len` readable bytes;
/// `value`, `value_len`, `found` and `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_get(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    value: *mut *mut c_char,
    value_len: *mut usize,
    found: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `value`,
    // `value_len`, `found` and `errmsg`, the handles `txn` and `cf` and the byte string `key`.
    let (out, txn, cf, key, errmsg) = unsafe {
        (
            ValueOut::check(value, value_len, found),
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.clear();
        let (t, key) = (txn?, key?);
        out.deliver(t.txn.get(&t.cf(cf), key)?)
    })
}

/// Reads `key` as `riptide_txn_get` does and protects it against concurrent writers until
/// the transaction ends (`SELECT ... FOR UPDATE` when `exclusive`, `LOCK IN SHARE MODE`
/// otherwise): a row lock when pessimistic (may fail with `RIPTIDE_TIMED_OUT`,
/// `RIPTIDE_DEADLOCK` or `RIPTIDE_CONFLICT`), validation at commit when optimistic.
///
/// # Safety
///
/// As `riptide_txn_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_get_for_update(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    exclusive: bool,
    value: *mut *mut c_char,
    value_len: *mut usize,
    found: *mut bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `value`,
    // `value_len`, `found` and `errmsg`, the handles `txn` and `cf` and the byte string `key`.
    let (out, txn, cf, key, errmsg) = unsafe {
        (
            ValueOut::check(value, value_len, found),
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.clear();
        let (t, key) = (txn?, key?);
        out.deliver(t.txn.get_for_update(&t.cf(cf), key, exclusive)?)
    })
}

/// The body of `riptide_txn_put` and `riptide_txn_insert`, over their converted parameters:
/// checks the handle and byte strings, then writes with `write`.
fn write_key_value(
    txn: CResult<&riptide_txn_t>,
    cf: Option<&riptide_cf_t>,
    key: CResult<&[u8]>,
    value: CResult<&[u8]>,
    errmsg: ErrMsg,
    write: impl FnOnce(&Transaction, &ColumnFamily, &[u8], &[u8]) -> riptide::Result<()>,
) -> riptide_status_t {
    errmsg.guard(|| {
        let (t, key, value) = (txn?, key?, value?);
        write(&t.txn, &t.cf(cf), key, value)
    })
}

/// Sets `key` to `value` in `cf` (NULL: the default column family) within the transaction.
/// A pessimistic transaction locks the row (may fail with `RIPTIDE_TIMED_OUT`,
/// `RIPTIDE_DEADLOCK` or `RIPTIDE_CONFLICT`).
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle; `cf` is NULL or a live column family handle
/// of the transaction's database; every `(pointer, length)` pair is NULL or `length`
/// readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_put(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `txn` and `cf`, the
    // byte strings `key` and `value` and the out-parameter `errmsg`.
    let (txn, cf, key, value, errmsg) = unsafe {
        (
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            bytes(value, value_len, "value"),
            ErrMsg::new(errmsg),
        )
    };
    write_key_value(txn, cf, key, value, errmsg, |txn, cf, k, v| {
        txn.put(cf, k, v)
    })
}

/// Like `riptide_txn_put`, for a key the caller expects to be new (an INSERT): in a
/// pessimistic transaction it also waits while another transaction's locking scan holds a
/// gap lock covering `key` (InnoDB's insert intention; `RIPTIDE_TIMED_OUT` or
/// `RIPTIDE_DEADLOCK`, and then nothing was written).
///
/// # Safety
///
/// As `riptide_txn_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_insert(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `txn` and `cf`, the
    // byte strings `key` and `value` and the out-parameter `errmsg`.
    let (txn, cf, key, value, errmsg) = unsafe {
        (
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            bytes(value, value_len, "value"),
            ErrMsg::new(errmsg),
        )
    };
    write_key_value(txn, cf, key, value, errmsg, |txn, cf, k, v| {
        txn.insert(cf, k, v)
    })
}

/// Deletes `key` from `cf` (NULL: the default column family) within the transaction.
///
/// # Safety
///
/// As `riptide_txn_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_delete(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `txn` and `cf`, the
    // byte string `key` and the out-parameter `errmsg`.
    let (txn, cf, key, errmsg) = unsafe {
        (
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (t, key) = (txn?, key?);
        t.txn.delete(&t.cf(cf), key)
    })
}

/// Single-deletes `key` from `cf` within the transaction (see `riptide_single_delete` for
/// the contract).
///
/// # Safety
///
/// As `riptide_txn_put`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_single_delete(
    txn: *mut riptide_txn_t,
    cf: *const riptide_cf_t,
    key: *const c_char,
    key_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handles `txn` and `cf`, the
    // byte string `key` and the out-parameter `errmsg`.
    let (txn, cf, key, errmsg) = unsafe {
        (
            arg_ref(txn, "txn"),
            arg_opt(cf),
            bytes(key, key_len, "key"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (t, key) = (txn?, key?);
        t.txn.single_delete(&t.cf(cf), key)
    })
}

/// Marks a savepoint. Savepoints nest.
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_set_savepoint(
    txn: *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn` and the
    // out-parameter `errmsg`.
    let (txn, errmsg) = unsafe { (arg_ref(txn, "txn"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| txn?.txn.set_savepoint())
}

/// Undoes every write since the newest savepoint and removes it; row locks taken after it
/// are released. `RIPTIDE_NOT_FOUND` if there is no savepoint.
///
/// # Safety
///
/// As `riptide_txn_set_savepoint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_rollback_to_savepoint(
    txn: *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn` and the
    // out-parameter `errmsg`.
    let (txn, errmsg) = unsafe { (arg_ref(txn, "txn"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| txn?.txn.rollback_to_savepoint())
}

/// Forgets the newest savepoint, keeping its writes. `RIPTIDE_NOT_FOUND` if there is none.
///
/// # Safety
///
/// As `riptide_txn_set_savepoint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_release_savepoint(
    txn: *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn` and the
    // out-parameter `errmsg`.
    let (txn, errmsg) = unsafe { (arg_ref(txn, "txn"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| txn?.txn.release_savepoint())
}

/// Two-phase commit, phase one: validates like commit, then makes the writes durable under
/// the xid `(format_id, gtrid, bqual)` without making them visible; locks stay held. Finish
/// with `riptide_txn_commit` / `riptide_txn_rollback`, or after a crash with
/// `riptide_commit_prepared` / `riptide_rollback_prepared`. An invalid xid (empty or too
/// long gtrid, too long bqual, format id -1) is `RIPTIDE_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `txn` is NULL or a live transaction handle; each `(pointer, length)` pair is NULL or
/// `length` readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_prepare(
    txn: *mut riptide_txn_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn`, the byte
    // strings `gtrid` and `bqual` and the out-parameter `errmsg`.
    let (txn, gtrid, bqual, errmsg) = unsafe {
        (
            arg_ref(txn, "txn"),
            bytes(gtrid, gtrid_len, "gtrid"),
            bytes(bqual, bqual_len, "bqual"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let t = txn?;
        t.txn.prepare(&xid(format_id, gtrid, bqual)?)
    })
}

/// Commits: validates (optimistic), writes every buffered write as one atomic batch and
/// releases the locks. After `RIPTIDE_CONFLICT` the transaction is rolled back. A prepared
/// transaction is committed by its xid.
///
/// # Safety
///
/// As `riptide_txn_set_savepoint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_commit(
    txn: *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn` and the
    // out-parameter `errmsg`.
    let (txn, errmsg) = unsafe { (arg_ref(txn, "txn"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| txn?.txn.commit())
}

/// Rolls back: forgets every buffered write and releases the locks (a prepared transaction
/// is rolled back durably).
///
/// # Safety
///
/// As `riptide_txn_set_savepoint`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_txn_rollback(
    txn: *mut riptide_txn_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `txn` and the
    // out-parameter `errmsg`.
    let (txn, errmsg) = unsafe { (arg_ref(txn, "txn"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| txn?.txn.rollback())
}
