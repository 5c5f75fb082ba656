//! Two-phase commit ids: the `riptide_xid_t` struct, and the database-level functions that
//! list, commit and roll back prepared transactions by xid.

use std::ffi::c_char;

use riptide::Xid;

use crate::db::riptide_db_t;
use crate::ffi_util::{CResult, Out, arg_ref, bytes, guard};
use crate::memory::malloc_array;
use crate::status::riptide_status_t;

/// The longest global transaction id, in bytes (XA `MAXGTRIDSIZE`).
pub const RIPTIDE_XID_MAX_GTRID_LEN: usize = 64;
/// The longest branch qualifier, in bytes (XA `MAXBQUALSIZE`).
pub const RIPTIDE_XID_MAX_BQUAL_LEN: usize = 64;

/// A two-phase-commit transaction id as X/Open XA (and MariaDB's `XID`) define it. Only the
/// first `gtrid_len` bytes of `gtrid` and `bqual_len` bytes of `bqual` are meaningful; the
/// rest are zero.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct riptide_xid_t {
    /// The format id (which naming scheme gtrid and bqual follow); -1 is XA's null XID and
    /// is never valid.
    pub format_id: i32,
    /// Length of the global transaction id, 1..=64.
    pub gtrid_len: u32,
    /// Length of the branch qualifier, 0..=64.
    pub bqual_len: u32,
    /// The global transaction id.
    pub gtrid: [u8; 64],
    /// The branch qualifier.
    pub bqual: [u8; 64],
}

impl riptide_xid_t {
    /// The C form of `xid`.
    fn from_xid(xid: &Xid) -> riptide_xid_t {
        let mut out = riptide_xid_t {
            format_id: xid.format_id(),
            gtrid_len: 0,
            bqual_len: 0,
            gtrid: [0; 64],
            bqual: [0; 64],
        };
        // `Xid` guarantees both lengths are at most 64; `zip` stops at the shorter anyway.
        for (d, s) in out.gtrid.iter_mut().zip(xid.gtrid()) {
            *d = *s;
            out.gtrid_len += 1;
        }
        for (d, s) in out.bqual.iter_mut().zip(xid.bqual()) {
            *d = *s;
            out.bqual_len += 1;
        }
        out
    }
}

/// The xid `(format_id, gtrid, bqual)` built from C parameters.
///
/// # Safety
///
/// Each `(pointer, length)` pair is NULL or `length` readable bytes.
pub(crate) unsafe fn xid_from_parts(
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
) -> CResult<Xid> {
    // SAFETY: forwarded contract.
    let g = unsafe { bytes(gtrid, gtrid_len, "gtrid") }?;
    // SAFETY: forwarded contract.
    let b = unsafe { bytes(bqual, bqual_len, "bqual") }?;
    Xid::new(format_id, g, b)
}

/// Lists the xids of every prepared transaction not finished yet (recovered from the WAL at
/// open, or prepared since): `*xids` receives an array of `*count` entries, to free with
/// `riptide_free` (never NULL on success, even when empty).
///
/// # Safety
///
/// `db` is NULL or a live database handle; `xids` and `count` are NULL or writable;
/// `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_prepared_list(
    db: *mut riptide_db_t,
    xids: *mut *mut riptide_xid_t,
    count: *mut usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let out_xids = Out::new(xids, "xids")?;
            // SAFETY: forwarded contract.
            let out_count = Out::new(count, "count")?;
            out_xids.set(std::ptr::null_mut());
            out_count.set(0);
            // SAFETY: forwarded contract.
            let list = arg_ref(db, "db")?.with(|db| Ok(db.prepared_transactions()))?;
            let c: Vec<riptide_xid_t> = list.iter().map(riptide_xid_t::from_xid).collect();
            out_xids.set(malloc_array(&c)?);
            out_count.set(c.len());
            Ok(())
        })
    }
}

/// Finishes the prepared transaction `xid` by committing or rolling it back.
///
/// # Safety
///
/// As `riptide_commit_prepared`.
unsafe fn finish(
    db: *mut riptide_db_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    commit: bool,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        guard(errmsg, || {
            // SAFETY: forwarded contract.
            let h = arg_ref(db, "db")?;
            // SAFETY: forwarded contract.
            let xid = xid_from_parts(format_id, gtrid, gtrid_len, bqual, bqual_len)?;
            h.with(|db| {
                if commit {
                    db.commit_prepared(&xid)
                } else {
                    db.rollback_prepared(&xid)
                }
            })
        })
    }
}

/// Commits the prepared transaction `(format_id, gtrid, bqual)` (for example one listed by
/// `riptide_prepared_list` after a crash). `RIPTIDE_NOT_FOUND` if none is prepared under it.
///
/// # Safety
///
/// `db` is NULL or a live database handle; each `(pointer, length)` pair is NULL or
/// `length` readable bytes; `errmsg` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_commit_prepared(
    db: *mut riptide_db_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        finish(
            db, format_id, gtrid, gtrid_len, bqual, bqual_len, true, errmsg,
        )
    }
}

/// Rolls back the prepared transaction `(format_id, gtrid, bqual)`. `RIPTIDE_NOT_FOUND` if
/// none is prepared under it.
///
/// # Safety
///
/// As `riptide_commit_prepared`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_rollback_prepared(
    db: *mut riptide_db_t,
    format_id: i32,
    gtrid: *const c_char,
    gtrid_len: usize,
    bqual: *const c_char,
    bqual_len: usize,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: forwarded contract.
    unsafe {
        finish(
            db, format_id, gtrid, gtrid_len, bqual, bqual_len, false, errmsg,
        )
    }
}
