//! `riptide_db_set_lock_wait_callback`: a handler session that waits for a row another
//! session holds reports both owners (what MariaDB turns into `thd_rpl_deadlock_check`),
//! NULL removes the callback, and a NULL database is refused.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;

use common::{TestHandler, check, take_message};
use riptide_capi::*;
use riptide_status_t::{RIPTIDE_INVALID_ARGUMENT, RIPTIDE_OK, RIPTIDE_TIMED_OUT};

type Reports = Mutex<Vec<(u64, Vec<u64>)>>;

/// Records each report into the `Reports` that `ctx` points to.
unsafe extern "C" fn record(ctx: *mut c_void, waiter: u64, blockers: *const u64, count: usize) {
    // SAFETY: `ctx` is the `Reports` the test installed with this callback, alive for the
    // whole test; `blockers` holds `count` owners during the call.
    let (reports, blockers) = unsafe {
        (
            &*ctx.cast::<Reports>(),
            std::slice::from_raw_parts(blockers, count),
        )
    };
    reports.lock().unwrap().push((waiter, blockers.to_vec()));
}

fn set_owner(s: *mut riptide_hsession_t, owner: u64) {
    let mut err = null_mut();
    // SAFETY: `s` is a live session used by this thread alone; `err` is a local.
    check(
        unsafe { riptide_hsession_set_owner(s, owner, &mut err) },
        err,
    );
}

#[test]
fn a_row_lock_wait_reports_the_owners_until_the_callback_is_removed() {
    let t = TestHandler::open();
    let reports: Reports = Mutex::new(Vec::new());
    let ctx = std::ptr::from_ref(&reports).cast_mut().cast::<c_void>();
    let mut err = null_mut();
    // SAFETY: `t.db.db` is live; `record` may run on any thread with `ctx`, which stays
    // valid until the callback is removed below (no wait is in progress then).
    check(
        unsafe { riptide_db_set_lock_wait_callback(t.db.db, Some(record), ctx, &mut err) },
        err,
    );

    let holder = t.begin();
    set_owner(holder, 41);
    assert_eq!(
        t.get_row(holder, b"1", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_OK
    );
    let waiter = t.begin();
    set_owner(waiter, 42);
    // SAFETY: `waiter` is live and used by this thread alone; `err` is a local.
    check(
        unsafe { riptide_hsession_set_lock_timeout(waiter, 20, &mut err) },
        err,
    );
    assert_eq!(
        t.get_row(waiter, b"1", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_TIMED_OUT
    );
    assert_eq!(*reports.lock().unwrap(), vec![(42, vec![41])]);

    // SAFETY: as above; NULL removes the callback.
    check(
        unsafe { riptide_db_set_lock_wait_callback(t.db.db, None, null_mut(), &mut err) },
        err,
    );
    assert_eq!(
        t.get_row(waiter, b"1", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_TIMED_OUT
    );
    assert_eq!(reports.lock().unwrap().len(), 1);
}

#[test]
fn a_null_database_is_refused() {
    let mut err = null_mut();
    // SAFETY: NULL is an allowed (refused) handle; `err` is a local.
    let st = unsafe {
        riptide_db_set_lock_wait_callback(null_mut(), Some(record), null_mut(), &mut err)
    };
    assert_eq!(st, RIPTIDE_INVALID_ARGUMENT);
    assert!(take_message(err).contains("db"));
}
