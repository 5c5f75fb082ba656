//! `riptide_db_create_checkpoint`: a checkpoint made through the C ABI opens with
//! `riptide_db_open` and holds every row written before it and none written after; NULL
//! arguments, an existing target, a missing parent and a closed database are refused with
//! their statuses, and `info` is zeroed on failure.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::CString;
use std::path::Path;
use std::ptr::null_mut;

use common::{TestDb, check, expect};
use riptide_capi::*;
use riptide_status_t::{
    RIPTIDE_CLOSED as CLOSED, RIPTIDE_INVALID_ARGUMENT as INVALID, RIPTIDE_NOT_FOUND as NOT_FOUND,
};

fn c_path(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

/// Opens the database at `path` through the ABI (default options), owning `dir`.
fn open_at(path: &Path, dir: tempfile::TempDir) -> TestDb {
    let path = c_path(path);
    let mut db = null_mut();
    let mut err = null_mut();
    // SAFETY: `path` is NUL-terminated; NULL options are the defaults; out-params are locals.
    let st = unsafe { riptide_db_open(path.as_ptr(), std::ptr::null(), &mut db, &mut err) };
    check(st, err);
    TestDb { db, dir }
}

#[test]
fn a_checkpoint_made_through_the_abi_opens_with_every_row() {
    let t = TestDb::open();
    for i in 0..200u32 {
        t.put(format!("k{i:04}").as_bytes(), &[1u8; 100]);
    }
    let mut err = null_mut();
    // SAFETY: `t.db` is live until `t` drops; `err` is a local out-parameter.
    unsafe { check(riptide_flush(t.db, &mut err), err) };
    t.put(b"in-the-wal", b"only in the memtable");

    let ck_dir = tempfile::tempdir().unwrap();
    let ck_path = ck_dir.path().join("ckpt");
    let path = c_path(&ck_path);
    let mut info = riptide_checkpoint_info_t::default();
    // SAFETY: `t.db` is live; `path` is NUL-terminated; `info` and `err` are locals.
    unsafe {
        check(
            riptide_db_create_checkpoint(t.db, path.as_ptr(), &mut info, &mut err),
            err,
        );
    }
    assert!(info.seqno >= 201, "{info:?}");
    assert!(info.tables_linked > 0, "{info:?}");
    assert_eq!(info.tables_copied, 0, "{info:?}");
    assert!(info.bytes_linked > 0 && info.bytes_copied > 0, "{info:?}");
    assert!(info.wal_segments >= 1, "{info:?}");
    assert!(info.total_us >= info.writer_stall_us, "{info:?}");
    t.put(b"after", b"not in the checkpoint");

    let ck = open_at(&ck_path, ck_dir);
    assert_eq!(ck.get(b"k0000").unwrap(), Some(vec![1u8; 100]));
    assert_eq!(ck.get(b"k0199").unwrap(), Some(vec![1u8; 100]));
    assert_eq!(
        ck.get(b"in-the-wal").unwrap(),
        Some(b"only in the memtable".to_vec())
    );
    assert_eq!(ck.get(b"after").unwrap(), None);
    // The checkpoint is a database of its own.
    ck.put(b"only-in-checkpoint", b"1");
    assert_eq!(t.get(b"only-in-checkpoint").unwrap(), None);
    assert_eq!(
        t.get(b"after").unwrap(),
        Some(b"not in the checkpoint".to_vec())
    );
}

#[test]
fn null_arguments_existing_targets_and_closed_databases_are_refused() {
    let t = TestDb::open();
    t.put(b"k", b"v");
    let base = t.dir.path();
    let fresh = c_path(&base.join("fresh"));
    let mut err = null_mut();
    let garbage = riptide_checkpoint_info_t {
        seqno: 99,
        tables_linked: 99,
        ..Default::default()
    };
    let mut info = garbage;
    let zeroed = |info: &riptide_checkpoint_info_t| {
        assert_eq!(info.seqno, 0, "{info:?}");
        assert_eq!(info.tables_linked, 0, "{info:?}");
        assert_eq!(info.total_us, 0, "{info:?}");
    };
    // SAFETY: `t.db` is live until `t` drops (and is closed, not freed, below); the paths
    // are NUL-terminated; `info` and `err` are locals.
    unsafe {
        let st = riptide_db_create_checkpoint(null_mut(), fresh.as_ptr(), &mut info, &mut err);
        expect(st, err, INVALID, "`db`");
        zeroed(&info);

        info = garbage;
        let st = riptide_db_create_checkpoint(t.db, std::ptr::null(), &mut info, &mut err);
        expect(st, err, INVALID, "`path`");
        zeroed(&info);
        assert!(!base.join("fresh").exists());

        // The database directory itself exists.
        let existing = c_path(&base.join("db"));
        info = garbage;
        let st = riptide_db_create_checkpoint(t.db, existing.as_ptr(), &mut info, &mut err);
        expect(st, err, INVALID, "already exists");
        zeroed(&info);

        let orphan = c_path(&base.join("no-such-dir").join("ckpt"));
        let st = riptide_db_create_checkpoint(t.db, orphan.as_ptr(), null_mut(), &mut err);
        expect(st, err, NOT_FOUND, "no-such-dir");

        let empty = CString::new("").unwrap();
        let st = riptide_db_create_checkpoint(t.db, empty.as_ptr(), null_mut(), &mut err);
        expect(st, err, INVALID, "`path`");

        // `info` and `errmsg` may be NULL.
        let st = riptide_db_create_checkpoint(t.db, fresh.as_ptr(), null_mut(), null_mut());
        assert_eq!(st, riptide_status_t::RIPTIDE_OK);
        assert!(base.join("fresh").join("MANIFEST").exists());

        check(riptide_db_close(t.db, &mut err), err);
        let later = c_path(&base.join("later"));
        info = garbage;
        let st = riptide_db_create_checkpoint(t.db, later.as_ptr(), &mut info, &mut err);
        expect(st, err, CLOSED, "closed");
        zeroed(&info);
        assert!(!base.join("later").exists());
    }
}
