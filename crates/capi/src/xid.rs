//! Two-phase commit ids: the `riptide_xid_t` struct, and the database-level functions that
//! list, commit and roll back prepared transactions by xid.

use std::ffi::c_char;

use riptide::Xid;

use crate::db::riptide_db_t;
use crate::ffi_util::{CResult, ErrMsg, Out, arg_ref, bytes};
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

/// The xid `(format_id, gtrid, bqual)` built from converted byte string parameters.
pub(crate) fn xid(format_id: i32, gtrid: CResult<&[u8]>, bqual: CResult<&[u8]>) -> CResult<Xid> {
    Xid::new(format_id, gtrid?, bqual?)
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the out-parameters `xids`,
    // `count` and `errmsg` and the handle `db`.
    let (out_xids, out_count, db, errmsg) = unsafe {
        (
            Out::new(xids, "xids"),
            Out::new(count, "count"),
            arg_ref(db, "db"),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        let (out_xids, out_count) = (out_xids?, out_count?);
        out_xids.set(std::ptr::null_mut());
        out_count.set(0);
        let list = db?.with(|d| Ok(d.prepared_transactions()))?;
        let c: Vec<riptide_xid_t> = list.iter().map(riptide_xid_t::from_xid).collect();
        out_xids.set(malloc_array(&c)?);
        out_count.set(c.len());
        Ok(())
    })
}

/// Finishes the prepared transaction `(format_id, gtrid, bqual)` by committing or rolling it
/// back, over the converted parameters of `riptide_commit_prepared` or
/// `riptide_rollback_prepared`.
fn finish(
    db: CResult<&riptide_db_t>,
    format_id: i32,
    gtrid: CResult<&[u8]>,
    bqual: CResult<&[u8]>,
    commit: bool,
    errmsg: ErrMsg,
) -> riptide_status_t {
    errmsg.guard(|| {
        let db = db?;
        let xid = xid(format_id, gtrid, bqual)?;
        db.with(|d| {
            if commit {
                d.commit_prepared(&xid)
            } else {
                d.rollback_prepared(&xid)
            }
        })
    })
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db`, the byte
    // strings `gtrid` and `bqual` and the out-parameter `errmsg`.
    let (db, gtrid, bqual, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            bytes(gtrid, gtrid_len, "gtrid"),
            bytes(bqual, bqual_len, "bqual"),
            ErrMsg::new(errmsg),
        )
    };
    finish(db, format_id, gtrid, bqual, true, errmsg)
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
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db`, the byte
    // strings `gtrid` and `bqual` and the out-parameter `errmsg`.
    let (db, gtrid, bqual, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            bytes(gtrid, gtrid_len, "gtrid"),
            bytes(bqual, bqual_len, "bqual"),
            ErrMsg::new(errmsg),
        )
    };
    finish(db, format_id, gtrid, bqual, false, errmsg)
}
