//! Every kind of bad argument is reported as `RIPTIDE_INVALID_ARGUMENT` with a message naming
//! the parameter, never a crash: NULL handles, NULL out-parameters, NULL data with a nonzero
//! length, unknown enum values, invalid xids.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ptr::{null, null_mut};

use common::{TestDb, check, expect};
use riptide_capi::*;
use riptide_status_t::RIPTIDE_INVALID_ARGUMENT as INVALID;

#[test]
fn null_handles_are_named_in_the_message() {
    let mut err = null_mut();
    let mut out_db = null_mut();
    let mut value = null_mut();
    let (mut len, mut found) = (0usize, false);
    // SAFETY: every pointer passed is NULL (which the contract allows) or a live local.
    unsafe {
        let st = riptide_put(null_mut(), null(), null(), 0, null(), 0, &mut err);
        expect(st, err, INVALID, "`db`");
        let st = riptide_get(
            null_mut(),
            null(),
            null(),
            null(),
            0,
            &mut value,
            &mut len,
            &mut found,
            &mut err,
        );
        expect(st, err, INVALID, "`db`");
        let st = riptide_db_open(null(), null(), &mut out_db, &mut err);
        expect(st, err, INVALID, "`path`");
        let st = riptide_db_open(c"/nonexistent".as_ptr(), null(), null_mut(), &mut err);
        expect(st, err, INVALID, "`db`");
        let st = riptide_write(null_mut(), null_mut(), &mut err);
        expect(st, err, INVALID, "`db`");
        let st = riptide_flush(null_mut(), &mut err);
        expect(st, err, INVALID, "`db`");
        let st = riptide_txn_commit(null_mut(), &mut err);
        expect(st, err, INVALID, "`txn`");
        let st = riptide_txn_iter_next(null_mut(), &mut err);
        expect(st, err, INVALID, "`iter`");
        let st = riptide_iter_seek(null_mut(), null(), 0, &mut err);
        expect(st, err, INVALID, "`iter`");
        let st = riptide_iter_set_readahead_limit(null_mut(), null(), 0, &mut err);
        expect(st, err, INVALID, "`iter`");
        let st = riptide_batch_put(null_mut(), null(), null(), 0, null(), 0, &mut err);
        expect(st, err, INVALID, "`batch`");
        let st = riptide_txn_options_set_isolation(null_mut(), 0, &mut err);
        expect(st, err, INVALID, "`options`");
        let st = riptide_stats_fill(null_mut(), null_mut(), 0, &mut err);
        expect(st, err, INVALID, "`values`");
        let st = riptide_prepared_list(null_mut(), null_mut(), null_mut(), &mut err);
        expect(st, err, INVALID, "`xids`");
    }
    assert!(out_db.is_null());
}

#[test]
fn null_out_parameters_and_lengths_are_refused() {
    let t = TestDb::open();
    let mut err = null_mut();
    let mut value = null_mut();
    let (mut len, mut found) = (0usize, false);
    // SAFETY: `t.db` is live; every other pointer is NULL or a live local.
    unsafe {
        let st = riptide_get(
            t.db,
            null(),
            null(),
            null(),
            0,
            null_mut(),
            &mut len,
            &mut found,
            &mut err,
        );
        expect(st, err, INVALID, "`value`");
        let st = riptide_get(
            t.db,
            null(),
            null(),
            null(),
            0,
            &mut value,
            null_mut(),
            &mut found,
            &mut err,
        );
        expect(st, err, INVALID, "`value_len`");
        let st = riptide_put(t.db, null(), null(), 4, null(), 0, &mut err);
        expect(st, err, INVALID, "`key` is NULL but its length is 4");
        let st = riptide_put(t.db, null(), c"k".as_ptr(), 1, null(), 9, &mut err);
        expect(st, err, INVALID, "`value`");
        let st = riptide_iter_create(
            t.db,
            null(),
            null(),
            null(),
            3,
            null(),
            0,
            &mut null_mut(),
            &mut err,
        );
        expect(st, err, INVALID, "`lower`");
        let st = riptide_cf_create(t.db, null(), &mut null_mut(), &mut err);
        expect(st, err, INVALID, "`name`");
        let st = riptide_cf_create(t.db, c"\xff".as_ptr(), &mut null_mut(), &mut err);
        expect(st, err, INVALID, "not UTF-8");
        let st = riptide_compact_range(t.db, null(), null(), 0, c"z".as_ptr(), 1, &mut err);
        expect(st, err, INVALID, "both bounds");
        let st = riptide_latest_seqno(t.db, null_mut(), &mut err);
        expect(st, err, INVALID, "`seqno`");
        // The empty key (NULL, 0) is a key like any other.
        let st = riptide_put(t.db, null(), null(), 0, c"empty".as_ptr(), 5, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_OK);
    }
    assert_eq!(t.get(b"").unwrap().as_deref(), Some(&b"empty"[..]));
    assert!(
        value.is_null() && len == 0 && !found,
        "out-params cleared on failure"
    );
}

#[test]
fn unknown_enum_values_and_bad_xids_are_refused() {
    let t = TestDb::open();
    let mut err = null_mut();
    let o = riptide_txn_options_create();
    let mut txn = null_mut();
    // SAFETY: `o` and `t.db` are live handles; `txn` and `err` are locals.
    unsafe {
        let st = riptide_txn_options_set_isolation(o, 3, &mut err);
        expect(st, err, INVALID, "isolation level 3");
        let st = riptide_txn_options_set_concurrency(o, -1, &mut err);
        expect(st, err, INVALID, "concurrency -1");
        let st = riptide_txn_begin(t.db, o, &mut txn, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_OK);
        riptide_txn_options_destroy(o);
        let st = riptide_txn_prepare(txn, 0, null(), 0, null(), 0, &mut err);
        expect(st, err, INVALID, "gtrid");
        let long = [b'g'; 65];
        let st = riptide_txn_prepare(txn, 0, long.as_ptr().cast(), 65, null(), 0, &mut err);
        expect(st, err, INVALID, "gtrid");
        let st = riptide_txn_prepare(txn, -1, c"g".as_ptr(), 1, null(), 0, &mut err);
        expect(st, err, INVALID, "-1");
        let st = riptide_commit_prepared(t.db, 0, null(), 3, null(), 0, &mut err);
        expect(st, err, INVALID, "`gtrid`");
        riptide_txn_destroy(txn);
    }
}

#[test]
fn lock_wait_functions_refuse_null_and_unknown_lock_modes() {
    let t = common::TestHandler::open();
    let mut err = null_mut();
    let mut intr = std::ptr::dangling_mut::<riptide_hinterrupt_t>();
    // SAFETY: `t`'s handles are live; every other pointer is NULL or a live local.
    unsafe {
        let st = riptide_hsession_interrupter(null(), &mut intr, &mut err);
        expect(st, err, INVALID, "`session`");
        assert!(intr.is_null(), "out-parameter cleared on failure");
        let s = t.begin();
        let st = riptide_hsession_interrupter(s, null_mut(), &mut err);
        expect(st, err, INVALID, "`interrupter`");
        let st = riptide_hsession_set_lock_timeout(null_mut(), 10, &mut err);
        expect(st, err, INVALID, "`session`");
        let st = riptide_handler_wait_prepared(null_mut(), c"t".as_ptr(), 1, 0, &mut err);
        expect(st, err, INVALID, "`handler`");
        let st = riptide_handler_wait_prepared(t.h, null(), 3, 0, &mut err);
        expect(st, err, INVALID, "`name`");
        // Lock modes past the SKIP LOCKED ones are refused by both users of the modes.
        let (st, _, msg) = t.get_row(s, b"1", 5);
        assert_eq!(st, INVALID);
        assert!(msg.contains("lock 5"), "{msg}");
        let mut cur = null_mut();
        let st = riptide_hcursor_create(t.tab, 9, &mut cur, &mut err);
        expect(st, err, INVALID, "index #9");
        assert!(cur.is_null());
        check(riptide_hcursor_create(t.tab, 0, &mut cur, &mut err), err);
        let st = riptide_hcursor_set_mode(cur, -1, &mut err);
        expect(st, err, INVALID, "mode -1");
        let mut row = std::mem::zeroed::<riptide_hrow_t>();
        let st = riptide_hcursor_next(null_mut(), cur, null(), 0, &mut row, &mut err);
        expect(st, err, INVALID, "`session`");
        let st = riptide_hcursor_next(s, cur, null(), 0, null_mut(), &mut err);
        expect(st, err, INVALID, "`row`");
        let st = riptide_hcursor_get(s, cur, null(), 4, &mut row, &mut err);
        expect(st, err, INVALID, "`pk`");
        assert!(!riptide_hcursor_set_keys_only(null(), cur, true));
        riptide_hcursor_reset(null_mut());
        riptide_hcursor_destroy(cur);
        riptide_hcursor_destroy(null_mut());
        // Held bulk loads: NULL session, NULL out-parameter, NULL load.
        let mut bulk = null_mut();
        let st = riptide_hsession_detach_bulk_load(null_mut(), &mut bulk, &mut err);
        expect(st, err, INVALID, "`session`");
        let st = riptide_hsession_detach_bulk_load(s, null_mut(), &mut err);
        expect(st, err, INVALID, "`bulk`");
        let st = riptide_hsession_attach_bulk_load(s, null_mut(), &mut err);
        expect(st, err, INVALID, "`bulk`");
        assert_eq!(riptide_hbulk_rows(null()), 0);
        riptide_hbulk_destroy(null_mut());
        // Online index builds: NULL handles and out-parameters.
        let st = riptide_hbuild_capture_changes(null_mut(), null_mut(), &mut err);
        expect(st, err, INVALID, "`handler`");
        let mut count = 0usize;
        let st = riptide_hbuild_take_changed_rows(null_mut(), &mut count, &mut err);
        expect(st, err, INVALID, "`build`");
        let (mut pk, mut pk_len) = (null(), 0usize);
        let st = riptide_hbuild_changed_row(null_mut(), 0, &mut pk, &mut pk_len, &mut err);
        expect(st, err, INVALID, "`build`");
        let st =
            riptide_hbuild_apply_change(null_mut(), 0, null(), 0, null(), 0, null(), 0, &mut err);
        expect(st, err, INVALID, "`build`");
        // NULL is a no-op for the functions that return nothing.
        riptide_hinterrupt_fire(null());
        riptide_hinterrupt_destroy(null_mut());
        riptide_hsession_clear_interrupt(null_mut());
        riptide_hsession_destroy(s);
    }
}

#[test]
fn null_is_a_no_op_for_destructors_and_a_default_for_accessors() {
    let mut len = 7usize;
    // SAFETY: NULL is allowed for every destructor and accessor.
    unsafe {
        riptide_db_destroy(null_mut());
        riptide_options_destroy(null_mut());
        riptide_txn_options_destroy(null_mut());
        riptide_cf_destroy(null_mut());
        riptide_batch_destroy(null_mut());
        riptide_snapshot_release(null_mut());
        riptide_iter_destroy(null_mut());
        riptide_txn_iter_destroy(null_mut());
        riptide_txn_destroy(null_mut());
        riptide_free(null_mut());
        riptide_free_value(null_mut(), 3);
        riptide_free_string_list(null_mut(), 3);
        assert!(riptide_iter_key(null(), &mut len).is_null());
        assert_eq!(len, 0);
        assert!(riptide_txn_iter_value(null(), null_mut()).is_null());
        assert!(!riptide_iter_valid(null()));
        assert!(!riptide_txn_iter_valid(null()));
        assert_eq!(riptide_batch_count(null()), 0);
        assert_eq!(riptide_snapshot_seqno(null()), 0);
        assert_eq!(riptide_txn_id(null()), 0);
        assert_eq!(riptide_cf_id(null()), 0);
        assert!(riptide_cf_name(null(), &mut len).is_null());
    }
}
