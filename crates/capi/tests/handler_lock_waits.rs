//! Lock waits through the handler ABI: `riptide_hsession_set_lock_timeout` (`NOWAIT`, `WAIT
//! n`), the `SKIP LOCKED` lock modes of `riptide_hsession_get_row` (`RIPTIDE_BUSY`) and
//! `riptide_hcursor_set_mode`, interrupting a wait
//! (`riptide_hsession_interrupter`, `riptide_hinterrupt_fire`,
//! `riptide_hsession_clear_interrupt`), and `riptide_handler_wait_prepared`.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use common::{TABLE, TestHandler, check, expect};
use riptide_capi::*;
use riptide_status_t::{RIPTIDE_BUSY, RIPTIDE_INTERRUPTED, RIPTIDE_OK, RIPTIDE_TIMED_OUT};

/// The pks a cursor of `s` over index `index` in `lock` mode (a `RIPTIDE_HCURSOR_*` mode;
/// `SKIP LOCKED` modes step over the rows other sessions hold) returns, checking each row.
fn locking_scan(
    t: &TestHandler,
    s: *mut riptide_hsession_t,
    index: usize,
    lock: i32,
) -> Vec<Vec<u8>> {
    let mut err = null_mut();
    let mut cur = null_mut();
    let mut out = Vec::new();
    // SAFETY: `s` and `t.tab` are live; `cur` is destroyed before the session, and each
    // row's views are read before the next call on the cursor.
    unsafe {
        check(
            riptide_hcursor_create(t.tab, index, &mut cur, &mut err),
            err,
        );
        check(riptide_hcursor_set_mode(cur, lock, &mut err), err);
        let mut row = std::mem::zeroed::<riptide_hrow_t>();
        check(riptide_hcursor_first(s, cur, &mut row, &mut err), err);
        while row.found {
            let pk = std::slice::from_raw_parts(row.pk.cast::<u8>(), row.pk_len).to_vec();
            let bytes = std::slice::from_raw_parts(row.row.cast::<u8>(), row.row_len);
            assert_eq!(bytes, b"row");
            out.push(pk);
            check(
                riptide_hcursor_next(s, cur, null(), 0, &mut row, &mut err),
                err,
            );
        }
        riptide_hcursor_destroy(cur);
    }
    out
}

fn pks(list: &[&[u8]]) -> Vec<Vec<u8>> {
    list.iter().map(|k| k.to_vec()).collect()
}

#[test]
fn skip_locked_modes_step_over_rows_other_sessions_hold() {
    let t = TestHandler::open();
    let holder = t.begin();
    assert_eq!(
        t.get_row(holder, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_OK
    );
    let writer = t.begin();
    t.insert(writer, b"5");

    let started = Instant::now();
    let s = t.begin();
    // Through the secondary index (entry, then the row by pk) and through the primary key.
    for index in [1, 0] {
        assert_eq!(
            locking_scan(&t, s, index, RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED),
            pks(&[b"1", b"3", b"4"]),
            "index {index}"
        );
    }
    let (st, row, msg) = t.get_row(s, b"2", RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED);
    assert_eq!((st, row), (RIPTIDE_BUSY, None), "{msg}");
    assert!(msg.contains("locked by another transaction"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "nothing waited"
    );
    // The session holds what it returned: another session's skip-locked read skips those.
    let other = t.begin();
    assert_eq!(
        t.get_row(other, b"1", RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED)
            .0,
        RIPTIDE_BUSY
    );
    let mut err = null_mut();
    // SAFETY: every session is live and destroyed once.
    unsafe {
        riptide_hsession_destroy(other);
        riptide_hsession_destroy(s);
        check(riptide_hsession_commit(writer, &mut err), err);
        riptide_hsession_destroy(writer);
        riptide_hsession_destroy(holder);
    }
    let s = t.begin();
    assert_eq!(
        locking_scan(&t, s, 1, RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED),
        pks(&[b"1", b"2", b"3", b"4", b"5"])
    );
    // SAFETY: `s` is live and destroyed once.
    unsafe { riptide_hsession_destroy(s) };
}

#[test]
fn nowait_and_wait_n_set_the_limit_of_later_waits() {
    let t = TestHandler::open();
    let holder = t.begin();
    assert_eq!(
        t.get_row(holder, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_OK
    );
    let s = t.begin();
    let mut err = null_mut();
    // SAFETY: the sessions are live and destroyed once; `err` is a local.
    unsafe {
        check(riptide_hsession_set_lock_timeout(s, 0, &mut err), err);
        let started = Instant::now();
        let (st, _, msg) = t.get_row(s, b"2", RIPTIDE_ROW_LOCK_SHARED);
        assert_eq!(st, RIPTIDE_TIMED_OUT, "{msg}");
        assert!(started.elapsed() < Duration::from_secs(5));
        check(riptide_hsession_set_lock_timeout(s, 100, &mut err), err);
        let started = Instant::now();
        let (st, _, msg) = t.get_row(s, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE);
        assert_eq!(st, RIPTIDE_TIMED_OUT, "{msg}");
        assert!(msg.contains("limit 100ms"), "{msg}");
        assert!(started.elapsed() >= Duration::from_millis(100));
        // Rows nobody holds are still granted at once.
        assert_eq!(t.get_row(s, b"3", RIPTIDE_ROW_LOCK_EXCLUSIVE).0, RIPTIDE_OK);
        let st = riptide_hsession_set_lock_timeout(null_mut(), 0, &mut err);
        expect(
            st,
            err,
            riptide_status_t::RIPTIDE_INVALID_ARGUMENT,
            "`session`",
        );
        riptide_hsession_destroy(s);
        riptide_hsession_destroy(holder);
    }
}

#[test]
fn an_interrupt_before_a_wait_is_honoured_until_cleared() {
    let t = TestHandler::open();
    let holder = t.begin();
    assert_eq!(
        t.get_row(holder, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        RIPTIDE_OK
    );
    let s = t.begin();
    let mut err = null_mut();
    let mut intr = null_mut();
    // SAFETY: the handles are live and freed once; out-parameters are locals.
    unsafe {
        check(riptide_hsession_interrupter(s, &mut intr, &mut err), err);
        assert!(!intr.is_null());
        riptide_hinterrupt_fire(intr);
        let started = Instant::now();
        let (st, _, msg) = t.get_row(s, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE);
        assert_eq!(st, RIPTIDE_INTERRUPTED, "{msg}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            std::ffi::CStr::from_ptr(riptide_status_name(13)).to_bytes(),
            b"RIPTIDE_INTERRUPTED"
        );
        // Re-armed (the next statement), it waits again: a NOWAIT shows it without waiting.
        riptide_hsession_clear_interrupt(s);
        check(riptide_hsession_set_lock_timeout(s, 0, &mut err), err);
        assert_eq!(
            t.get_row(s, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
            RIPTIDE_TIMED_OUT
        );
        riptide_hinterrupt_destroy(intr);
        riptide_hsession_destroy(s);
        riptide_hsession_destroy(holder);
    }
}

#[test]
fn ddl_waits_for_a_prepared_transaction() {
    let t = TestHandler::open();
    let s = t.begin();
    t.insert(s, b"9");
    let mut err = null_mut();
    // SAFETY: the handles are live and freed once; the byte strings are readable.
    unsafe {
        check(
            riptide_hsession_prepare(s, 1, c"xa-9".as_ptr(), 4, null(), 0, &mut err),
            err,
        );
        // The client disconnects: the transaction stays prepared.
        riptide_hsession_destroy(s);
        let started = Instant::now();
        let st =
            riptide_handler_wait_prepared(t.h, TABLE.as_ptr().cast(), TABLE.len(), 50, &mut err);
        expect(st, err, RIPTIDE_TIMED_OUT, "./db/t");
        assert!(started.elapsed() >= Duration::from_millis(50));
        let st =
            riptide_handler_wait_prepared(t.h, TABLE.as_ptr().cast(), TABLE.len(), 0, &mut err);
        expect(
            st,
            err,
            RIPTIDE_TIMED_OUT,
            "prepared transaction 1:78612d39:",
        );
        // A table that does not exist has nothing to wait for.
        let other = b"./db/none";
        check(
            riptide_handler_wait_prepared(t.h, other.as_ptr().cast(), other.len(), 0, &mut err),
            err,
        );
        check(
            riptide_rollback_prepared(t.db.db, 1, c"xa-9".as_ptr(), 4, null(), 0, &mut err),
            err,
        );
        check(
            riptide_handler_wait_prepared(
                t.h,
                TABLE.as_ptr().cast(),
                TABLE.len(),
                60_000,
                &mut err,
            ),
            err,
        );
        let st = riptide_handler_wait_prepared(null_mut(), null(), 0, 0, &mut err);
        expect(
            st,
            err,
            riptide_status_t::RIPTIDE_INVALID_ARGUMENT,
            "`handler`",
        );
    }
}
