//! `riptide_db_create_checkpoint`: a consistent copy of an open database in a new
//! directory (online backup), and `riptide_checkpoint_info_t`, what it made.

use std::ffi::c_char;

use riptide::CheckpointInfo;

use crate::db::{path_from_bytes, riptide_db_t};
use crate::ffi_util::{ErrMsg, Out, arg_ref, c_bytes};
use crate::status::riptide_status_t;

/// What `riptide_db_create_checkpoint` made (`riptide::CheckpointInfo`). All zero after a
/// failed call.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct riptide_checkpoint_info_t {
    /// The sequence number the checkpoint holds the database at: every write and commit
    /// published at or below it is in it, none above it. A database opened on the
    /// checkpoint starts there.
    pub seqno: u64,
    /// Table files hard-linked into the checkpoint (no byte copied).
    pub tables_linked: u64,
    /// Table files copied because the file system could not link them (the checkpoint is
    /// on another file system).
    pub tables_copied: u64,
    /// WAL segments copied (the last one up to `seqno`).
    pub wal_segments: u64,
    /// Bytes of the linked table files.
    pub bytes_linked: u64,
    /// Bytes written by copying: the WAL segments, the manifest and any copied table file.
    pub bytes_copied: u64,
    /// Microseconds writers were held off while the checkpoint's point was captured.
    pub writer_stall_us: u64,
    /// Microseconds the whole call took.
    pub total_us: u64,
}

impl From<CheckpointInfo> for riptide_checkpoint_info_t {
    fn from(info: CheckpointInfo) -> Self {
        let micros = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        riptide_checkpoint_info_t {
            seqno: info.seqno,
            tables_linked: info.tables_linked,
            tables_copied: info.tables_copied,
            wal_segments: info.wal_segments,
            bytes_linked: info.bytes_linked,
            bytes_copied: info.bytes_copied,
            writer_stall_us: micros(info.writer_stall),
            total_us: micros(info.total),
        }
    }
}

/// Makes a checkpoint of the open database in the new directory `path` (a NUL-terminated
/// string) while the database keeps working: `riptide_db_open` on `path` gives the
/// database as it was at one sequence number, with every write and commit acknowledged
/// before this call, no commit by half, and the transactions prepared at that point still
/// prepared (`riptide_prepared_list`), to commit or roll back by xid. Table files are
/// hard-linked (copied where the file system cannot link them), the WAL and a manifest are
/// copied; writers wait only while the point is captured (`writer_stall_us`). Files outside
/// the engine (a MariaDB server's own) are not included.
///
/// `path` must not exist (`RIPTIDE_INVALID_ARGUMENT`) and its parent must
/// (`RIPTIDE_NOT_FOUND`); the checkpoint is written into `<path>.checkpoint-tmp` and
/// renamed to `path` once complete and synced, and on any failure nothing is left at
/// `path` (`RIPTIDE_BUSY` if `<path>.checkpoint-tmp` exists already: another checkpoint
/// to `path` is running, or a crash interrupted one; remove it). `RIPTIDE_IO` names the
/// file and the step that failed; `RIPTIDE_CLOSED` after `riptide_db_close`.
///
/// `info` (NULL if not wanted) receives what was made, all zero on failure.
///
/// # Safety
///
/// `db` is NULL or a live database handle; `path` is NULL or NUL-terminated; `info` and
/// `errmsg` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn riptide_db_create_checkpoint(
    db: *mut riptide_db_t,
    path: *const c_char,
    info: *mut riptide_checkpoint_info_t,
    errmsg: *mut *mut c_char,
) -> riptide_status_t {
    // SAFETY: per `# Safety`, the ffi_util contract holds for the handle `db`, the C string
    // `path` and the out-parameters `info` (optional) and `errmsg`.
    let (db, path, info, errmsg) = unsafe {
        (
            arg_ref(db, "db"),
            c_bytes(path, "path"),
            Out::optional(info),
            ErrMsg::new(errmsg),
        )
    };
    errmsg.guard(|| {
        if let Some(out) = &info {
            out.set(riptide_checkpoint_info_t::default());
        }
        let db = db?;
        let path = path_from_bytes(path?)?;
        let made = db.with(|d| d.create_checkpoint(&path))?;
        if let Some(out) = &info {
            out.set(made.into());
        }
        Ok(())
    })
}
