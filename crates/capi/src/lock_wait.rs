//! Telling a C host of every lock wait (`riptide_db_set_lock_wait_callback`): MariaDB's
//! parallel replication hears of waits this way (`thd_rpl_deadlock_check`).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use riptide::LockWaitListener;

use crate::db::riptide_db_t;
use crate::ffi_util::{ErrMsg, arg_ref};
use crate::status::riptide_status_t;

/// What `riptide_db_set_lock_wait_callback` calls: `callback(ctx, waiter, blockers, count)`
/// with the owner of a transaction about to wait for a row lock (or to insert into a
/// locked gap) and the `count` owners (at least one) of the transactions it waits for.
/// Owners are what `riptide_hsession_set_owner` gave (MariaDB:
/// connection ids); transactions without one are left out. `blockers` is valid during the
/// call only.
pub type riptide_lock_wait_callback_t =
    Option<unsafe extern "C" fn(ctx: *mut c_void, waiter: u64, blockers: *const u64, count: usize)>;

/// The host's context pointer, handed back to its callback on whatever thread waits.
struct HostContext(*mut c_void);

// SAFETY: `riptide_db_set_lock_wait_callback` requires `ctx` to be usable from any thread
// for as long as the callback stays installed; Riptide only passes it back to the callback.
unsafe impl Send for HostContext {}
// SAFETY: as for `Send`: the pointer is never dereferenced here, only handed back.
unsafe impl Sync for HostContext {}

impl HostContext {
    /// The pointer (a method, so that a closure captures the whole `Send` wrapper rather
    /// than its raw field).
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Installs `callback` (NULL: removes the one installed), called on the waiting thread when
/// a transaction with an owner starts to wait for a lock held (or waited for ahead) by
/// transactions with owners, and again whenever the set it waits behind changes.
///
/// It runs while Riptide holds its mutex for the key, so every blocker it names is still
/// open during the call (what the host keeps per owner stays valid if the host drops it
/// only after the owner's transactions ended). It must return quickly and must not call
/// Riptide (no transaction, lock or wait) nor wait for another transaction; it must not
/// unwind (a C++ exception escaping it aborts the process).
///
/// # Safety
///
/// `db` is NULL or a live database handle; `errmsg` is NULL or writable. `callback` is NULL
/// or a function safe to call from any thread with `ctx`. Both stay valid until the
/// callback is replaced or removed and every lock wait that began before that has ended (a
/// wait keeps the callback it began with); for a host that installs one for the life of
/// the database, until `riptide_db_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_set_lock_wait_callback(
    db: *mut riptide_db_t,
    callback: riptide_lock_wait_callback_t,
    ctx: *mut c_void,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db` and the
    // out-parameter `errmsg`.
    let (db, errmsg) = unsafe { (arg_ref(db, "db"), ErrMsg::new(errmsg)) };
    errmsg.guard(|| {
        let db = db?;
        let listener = callback.map(|f| {
            let ctx = HostContext(ctx);
            let listener: LockWaitListener = Arc::new(move |waiter, blockers: &[u64]| {
                // SAFETY: per `# Safety` of the installer, `f` may be called from any thread
                // with `ctx`; `blockers` is a live slice of `blockers.len()` owners for the
                // duration of the call.
                unsafe { f(ctx.get(), waiter, blockers.as_ptr(), blockers.len()) }
            });
            listener
        });
        db.with(|d| {
            d.set_lock_wait_listener(listener);
            Ok(())
        })
    })
}
