//! `riptide_snapshot_t`: a pinned, consistent read view of a database.

use std::ffi::c_char;

use riptide::Snapshot;

use crate::db::riptide_db_t;
use crate::ffi_util::{ErrMsg, Out, arg_ref, destroy_handle, into_handle, query};
use crate::status::riptide_status_t;

/// A snapshot (opaque): reads through it see exactly the writes committed before it was
/// taken. Made by `riptide_snapshot_create`, freed by `riptide_snapshot_release` (which lets
/// compaction discard versions only it could see). May be shared between threads.
pub struct riptide_snapshot_t {
    pub(crate) snap: Snapshot,
}

/// Takes a snapshot of the database's current state and stores it in `*snapshot`.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `snapshot` is NULL or writable; `errmsg` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_snapshot_create(
    db: *mut riptide_db_t,
    snapshot: *mut *mut riptide_snapshot_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `snapshot`
    // and `errmsg` and the handle `db`.
    let (out, db, errmsg) = unsafe {
        (
            Out::new(snapshot, "snapshot"),
            arg_ref(db, "db"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let out = out?;
        out.set(std::ptr::null_mut());
        let snap = db?.with(|d| Ok(d.snapshot()))?;
        out.set(into_handle(riptide_snapshot_t { snap }));
        Ok(())
    })
}

/// Releases (frees) a snapshot. NULL is a no-op.
///
/// # Safety
///
/// `snapshot` is NULL or a live snapshot handle that no other thread is using and that is
/// not used afterwards (iterators made with it may outlive it: they keep their own view).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_snapshot_release(snapshot: *mut riptide_snapshot_t) {
    // SAFETY: per `# Safety`, `snapshot` follows the freed handle rule of the ffi_util
    // contract: NULL or made by `riptide_snapshot_create` and never used again.
    unsafe { destroy_handle(snapshot) }
}

/// The sequence number of the last write the snapshot sees; 0 for NULL.
///
/// # Safety
///
/// `snapshot` is NULL or a live snapshot handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_snapshot_seqno(snapshot: *const riptide_snapshot_t) -> u64 {
    // SAFETY: per `# Safety`, `snapshot` follows the handle rule of the ffi_util contract.
    unsafe { query(snapshot, 0, |s| s.snap.seqno()) }
}
