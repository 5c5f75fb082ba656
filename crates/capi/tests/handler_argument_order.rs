//! Which bad argument of a handler ABI function is reported first, whether the call is
//! counted in `riptide_handler_calls`, and what a failed call leaves in its out-parameters:
//! all observable by C callers, so pinned here. For each function, a ladder: step `k` passes
//! the first `k` checked arguments valid and the others bad, and must name argument `k`.
//!
//! One test in this file: `riptide_handler_calls` counts across the process, so no other test
//! may call the handler ABI meanwhile.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

use common::{TestHandler, check, expect};
use riptide_capi::*;
use riptide_status_t::RIPTIDE_INVALID_ARGUMENT as INVALID;

/// `good` when `valid`, else `bad`.
fn pick<T>(valid: bool, good: T, bad: T) -> T {
    if valid { good } else { bad }
}

/// Runs the ladder of `what`: `call(k, &mut err)` must fail with `RIPTIDE_INVALID_ARGUMENT`
/// and a message containing `needles[k]`, and add `counted` calls to `riptide_handler_calls`.
fn ladder(
    what: &str,
    counted: bool,
    needles: &[&str],
    mut call: impl FnMut(usize, *mut *mut c_char) -> riptide_status_t,
) {
    for (k, needle) in needles.iter().enumerate() {
        let mut err = null_mut();
        let before = riptide_handler_calls();
        let st = call(k, &mut err);
        let calls = riptide_handler_calls() - before;
        assert_eq!(calls, u64::from(counted), "{what}, step {k}: calls counted");
        assert_eq!(st, INVALID, "{what}, step {k}");
        expect(st, err, INVALID, needle);
    }
}

fn key(b: &[u8]) -> riptide_hkey_t {
    riptide_hkey_t {
        data: b.as_ptr().cast(),
        len: b.len(),
        has_null: false,
    }
}

unsafe extern "C" fn no_keys(
    _ctx: *mut c_void,
    _pk: *const c_char,
    _pk_len: usize,
    _row: *const c_char,
    _row_len: usize,
    _keys: *mut riptide_hkey_t,
    _nkeys: usize,
) -> bool {
    false
}

#[test]
fn handler_functions_report_their_arguments_in_order() {
    let t = TestHandler::open();
    let (h, tab) = (t.h, t.tab);
    let s = t.begin();
    let mut cur = null_mut();
    let mut err = null_mut();
    // SAFETY: `tab` is live; `cur` and `err` are locals.
    unsafe { check(riptide_hcursor_create(tab, 0, &mut cur, &mut err), err) };
    let name = b"./db/t";
    let (nm, nl) = (name.as_ptr().cast::<c_char>(), name.len());
    let pk = b"9";
    let (p, pl) = (pk.as_ptr().cast::<c_char>(), pk.len());
    let good_keys = [key(b"9")];
    let bad_data = [riptide_hkey_t {
        data: null(),
        len: 5,
        has_null: false,
    }];
    let spec = |kind| riptide_index_spec_t {
        kind,
        unique: true,
        key_parts: 1,
        name: null(),
    };
    let specs = [spec(7), spec(RIPTIDE_INDEX_SECONDARY)];
    let mut row = riptide_hrow_t {
        found: true,
        pk: null(),
        pk_len: 0,
        key: null(),
        key_len: 0,
        row: null(),
        row_len: 0,
    };

    // SAFETY: every handle passed is NULL or live (`h`, `tab`, `s`, `cur`, used by this
    // thread alone); every byte string is NULL or readable for its length (a bad one is NULL
    // with a nonzero length, which the functions refuse); every array is NULL or readable;
    // every out-parameter is NULL or a local.
    unsafe {
        // The handler engine.
        let mut out_h = std::ptr::dangling_mut::<riptide_handler_t>();
        ladder("handler_open", false, &["`handler`", "`db`"], |k, e| {
            let out = pick(k > 0, &raw mut out_h, null_mut());
            riptide_handler_open(null_mut(), out, e)
        });
        assert!(out_h.is_null(), "handler_open clears *handler on failure");
        ladder("handler_close", true, &["`handler`"], |_, e| {
            riptide_handler_close(null_mut(), e)
        });
        ladder(
            "set_key_format",
            true,
            &["key format 300", "`handler`"],
            |k, e| riptide_handler_set_key_format(null_mut(), pick(k > 0, 1, 300), e),
        );
        let needles = ["`handler`", "`name`", "`specs` is NULL", "specs[0].kind 7"];
        for temporary in [false, true] {
            ladder("create_table", true, &needles, |k, e| {
                let f = if temporary {
                    riptide_handler_create_temporary_table
                } else {
                    riptide_handler_create_table
                };
                let hh = pick(k > 0, h, null_mut());
                let n = pick(k > 1, nm, null());
                let sp = pick(k > 2, specs.as_ptr(), null());
                f(hh, n, 3, sp, 2, 1, e)
            });
        }
        let mut existed = true;
        ladder("drop_table", true, &["`handler`", "`name`"], |k, e| {
            let hh = pick(k > 0, h, null_mut());
            riptide_handler_drop_table(hh, null(), 3, &mut existed, e)
        });
        assert!(existed, "drop_table writes *existed on success only");
        ladder("mark_temporary", true, &["`handler`", "`name`"], |k, e| {
            riptide_handler_mark_temporary(pick(k > 0, h, null_mut()), null(), 3, true, e)
        });
        ladder(
            "rename_table",
            true,
            &["`handler`", "`from`", "`to`"],
            |k, e| {
                let hh = pick(k > 0, h, null_mut());
                let from = pick(k > 1, nm, null());
                riptide_handler_rename_table(hh, from, nl, null(), 3, e)
            },
        );
        ladder("truncate_table", true, &["`handler`", "`name`"], |k, e| {
            riptide_handler_truncate_table(pick(k > 0, h, null_mut()), null(), 3, e)
        });
        ladder("wait_prepared", true, &["`handler`", "`name`"], |k, e| {
            riptide_handler_wait_prepared(pick(k > 0, h, null_mut()), null(), 3, 0, e)
        });
        let mut out_t = std::ptr::dangling_mut::<riptide_htable_t>();
        ladder(
            "open_table",
            true,
            &["`table`", "`handler`", "`name`"],
            |k, e| {
                let out = pick(k > 0, &raw mut out_t, null_mut());
                riptide_handler_open_table(pick(k > 1, h, null_mut()), null(), 3, out, e)
            },
        );
        assert!(out_t.is_null(), "open_table clears *table on failure");

        // Tables.
        let mut first = 77u64;
        ladder("reserve_autoinc", true, &["`first`", "`table`"], |k, e| {
            let out = pick(k > 0, &raw mut first, null_mut());
            riptide_htable_reserve_autoinc(null(), 1, 1, 1, out, e)
        });
        assert_eq!(first, 77, "reserve_autoinc leaves *first alone on failure");
        ladder("observe_autoinc", true, &["`table`"], |_, e| {
            riptide_htable_observe_autoinc(null(), 5, e)
        });
        let mut count = 77u64;
        let needles = ["`count`", "`table`", "`lower`", "`upper`"];
        ladder("estimate_range", true, &needles, |k, e| {
            let out = pick(k > 0, &raw mut count, null_mut());
            let tt = pick(k > 1, tab.cast_const(), null());
            let lower = pick(k > 2, p, null());
            riptide_htable_estimate_range(tt, 0, lower, pl, false, null(), 3, true, 10, out, e)
        });
        assert_eq!(count, 0, "estimate_range clears *count on failure");
        let mut rows = 77u64;
        ladder("refresh_statistics", true, &["`table`"], |_, e| {
            riptide_htable_refresh_statistics(null(), &mut rows, e)
        });
        assert_eq!(rows, 77, "refresh_statistics writes *rows on success only");
        ladder("compact", true, &["`table`"], |_, e| {
            riptide_htable_compact(null(), e)
        });

        // Sessions.
        let needles = ["`session`", "`handler`", "isolation 9"];
        for snapshot in [false, true] {
            let mut out_s = std::ptr::dangling_mut::<riptide_hsession_t>();
            ladder("hsession_begin", true, &needles, |k, e| {
                let f = if snapshot {
                    riptide_hsession_begin_snapshot
                } else {
                    riptide_hsession_begin
                };
                let out = pick(k > 0, &raw mut out_s, null_mut());
                f(pick(k > 1, h, null_mut()), 9, 0, out, e)
            });
            assert!(out_s.is_null(), "begin clears *session on failure");
        }
        let mut out_i = std::ptr::dangling_mut::<riptide_hinterrupt_t>();
        ladder(
            "interrupter",
            true,
            &["`interrupter`", "`session`"],
            |k, e| {
                let out = pick(k > 0, &raw mut out_i, null_mut());
                riptide_hsession_interrupter(null(), out, e)
            },
        );
        assert!(
            out_i.is_null(),
            "interrupter clears *interrupter on failure"
        );
        type SessionCall =
            unsafe extern "C" fn(*mut riptide_hsession_t, *mut *mut c_char) -> riptide_status_t;
        let plain: [(&str, SessionCall); 3] = [
            ("commit", riptide_hsession_commit),
            ("rollback", riptide_hsession_rollback),
            ("begin_statement", riptide_hsession_begin_statement),
        ];
        for (what, f) in plain {
            ladder(what, true, &["`session`"], |_, e| f(null_mut(), e));
        }
        ladder("set_lock_timeout", true, &["`session`"], |_, e| {
            riptide_hsession_set_lock_timeout(null_mut(), 10, e)
        });
        ladder("end_statement", true, &["`session`"], |_, e| {
            riptide_hsession_end_statement(null_mut(), true, e)
        });
        ladder("savepoint_set", true, &["`session`"], |_, e| {
            riptide_hsession_savepoint_set(null_mut(), 1, e)
        });
        ladder("savepoint_rollback", true, &["`session`"], |_, e| {
            riptide_hsession_savepoint_rollback(null_mut(), 1, e)
        });
        ladder("savepoint_release", true, &["`session`"], |_, e| {
            riptide_hsession_savepoint_release(null_mut(), 1, e)
        });
        let needles = ["`session`", "`gtrid`", "`bqual`", "-1"];
        ladder("prepare", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let g = pick(k > 1, p, null());
            let b = pick(k > 2, p, null());
            riptide_hsession_prepare(ss, -1, g, pl, b, pl, e)
        });

        let mut hidden = [7u8; 8];
        let mut dup = 77usize;
        let needles = [
            "`session`",
            "`table`",
            "`pk`",
            "`keys` is NULL but its count is 1",
            "`keys[].data` is NULL but its length is 5",
            "`row`",
        ];
        ladder("insert", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let tt = pick(k > 1, tab.cast_const(), null());
            let pp = pick(k > 2, p, null());
            let keys = pick(k > 3, pick(k > 4, &good_keys, &bad_data).as_ptr(), null());
            let hr = hidden.as_mut_ptr();
            riptide_hsession_insert(ss, tt, pp, pl, keys, 1, null(), 3, hr, &mut dup, e)
        });
        assert_eq!(hidden, [7; 8], "insert writes *hidden_ref on success only");
        assert_eq!(dup, 77, "insert writes *dup_index for duplicates only");
        let needles = [
            "`session`",
            "`table`",
            "`old_pk`",
            "`new_pk`",
            "`keys[].data` is NULL but its length is 5",
            "`keys` is NULL but its count is 1",
            "`row`",
        ];
        ladder("update", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let tt = pick(k > 1, tab.cast_const(), null());
            let old = pick(k > 2, p, null());
            let new = pick(k > 3, p, null());
            let old_keys = pick(k > 4, &good_keys, &bad_data).as_ptr();
            let new_keys = pick(k > 5, good_keys.as_ptr(), null());
            riptide_hsession_update(
                ss,
                tt,
                old,
                pl,
                old_keys,
                new,
                pl,
                new_keys,
                1,
                null(),
                3,
                null_mut(),
                &mut dup,
                e,
            )
        });
        // The old keys are checked before the new ones whatever is wrong with them.
        ladder("update, keys", true, &["`keys` is NULL"], |_, e| {
            riptide_hsession_update(
                s,
                tab,
                p,
                pl,
                null(),
                p,
                pl,
                bad_data.as_ptr(),
                1,
                null(),
                0,
                null_mut(),
                null_mut(),
                e,
            )
        });
        assert_eq!(dup, 77, "update writes *dup_index for duplicates only");
        let needles = ["`session`", "`table`", "`pk`", "`keys` is NULL"];
        ladder("delete", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let tt = pick(k > 1, tab.cast_const(), null());
            let pp = pick(k > 2, p, null());
            riptide_hsession_delete(ss, tt, pp, pl, null(), 1, e)
        });
        let (mut v, mut vl, mut found) = (std::ptr::dangling_mut::<c_char>(), 7usize, true);
        let needles = [
            "`session`",
            "`value`",
            "`value_len`",
            "`found`",
            "`table`",
            "`pk`",
            "lock 9",
        ];
        ladder("get_row", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let vv = pick(k > 1, &raw mut v, null_mut());
            let ll = pick(k > 2, &raw mut vl, null_mut());
            let ff = pick(k > 3, &raw mut found, null_mut());
            let tt = pick(k > 4, tab.cast_const(), null());
            let pp = pick(k > 5, p, null());
            riptide_hsession_get_row(ss, tt, pp, pl, 9, vv, ll, ff, e)
        });
        assert!(
            v.is_null() && vl == 0 && !found,
            "get_row clears its results"
        );
        let mut released = 77usize;
        let needles = ["`session`", "`table`", "`pk`"];
        ladder("unlock_row", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let tt = pick(k > 1, tab.cast_const(), null());
            riptide_hsession_unlock_row(ss, tt, null(), 3, &mut released, e)
        });
        assert_eq!(released, 77, "unlock_row writes *released on success only");
        ladder("lock_value", true, &needles[..2], |k, e| {
            let ss = pick(k > 0, s, null_mut());
            riptide_hsession_lock_value(ss, null(), 1, p, pl, e)
        });
        ladder("lock_value, key", true, &["`key`"], |_, e| {
            riptide_hsession_lock_value(s, tab, 1, null(), 3, e)
        });
        let (mut problems, mut report) = (77u64, std::ptr::dangling_mut::<c_char>());
        let needles = [
            "`session`",
            "`problems`",
            "`report`",
            "`table`",
            "`keys_fn`",
        ];
        ladder("check_table", true, &needles, |k, e| {
            let ss = pick(k > 0, s, null_mut());
            let pr = pick(k > 1, &raw mut problems, null_mut());
            let rp = pick(k > 2, &raw mut report, null_mut());
            let tt = pick(k > 3, tab.cast_const(), null());
            let f = pick(k > 4, Some(no_keys as _), None);
            riptide_hsession_check_table(ss, tt, f, null_mut(), 10, pr, rp, e)
        });
        assert!(
            problems == 0 && report.is_null(),
            "check_table clears its results"
        );

        // Cursors.
        let mut out_c = std::ptr::dangling_mut::<riptide_hcursor_t>();
        ladder(
            "hcursor_create",
            true,
            &["`cursor`", "`table`", "index #9"],
            |k, e| {
                let out = pick(k > 0, &raw mut out_c, null_mut());
                riptide_hcursor_create(pick(k > 1, tab.cast_const(), null()), 9, out, e)
            },
        );
        assert!(out_c.is_null(), "hcursor_create clears *cursor on failure");
        ladder("set_mode", true, &["`cursor`", "mode 9"], |k, e| {
            riptide_hcursor_set_mode(pick(k > 0, cur, null_mut()), 9, e)
        });
        ladder("set_range_end", true, &["`cursor`", "`tuple`"], |k, e| {
            riptide_hcursor_set_range_end(pick(k > 0, cur, null_mut()), null(), 3, true, e)
        });
        let needles = ["`row`", "`session`", "`cursor`", "`tuple`", "seek 9"];
        ladder("seek", true, &needles, |k, e| {
            let rr = pick(k > 0, &raw mut row, null_mut());
            let ss = pick(k > 1, s, null_mut());
            let cc = pick(k > 2, cur, null_mut());
            let tu = pick(k > 3, p, null());
            riptide_hcursor_seek(ss, cc, tu, pl, 9, false, rr, e)
        });
        assert!(!row.found, "a failed read clears *row");
        type Read = unsafe extern "C" fn(
            *mut riptide_hsession_t,
            *mut riptide_hcursor_t,
            *mut riptide_hrow_t,
            *mut *mut c_char,
        ) -> riptide_status_t;
        let ends: [(&str, Read); 2] = [
            ("first", riptide_hcursor_first),
            ("last", riptide_hcursor_last),
        ];
        for (what, f) in ends {
            ladder(what, true, &needles[..3], |k, e| {
                let rr = pick(k > 0, &raw mut row, null_mut());
                let ss = pick(k > 1, s, null_mut());
                f(ss, null_mut(), rr, e)
            });
        }
        type Step = unsafe extern "C" fn(
            *mut riptide_hsession_t,
            *mut riptide_hcursor_t,
            *const c_char,
            usize,
            *mut riptide_hrow_t,
            *mut *mut c_char,
        ) -> riptide_status_t;
        let steps: [(&str, Step, &str); 3] = [
            ("next", riptide_hcursor_next, "`within`"),
            ("prev", riptide_hcursor_prev, "`within`"),
            ("get", riptide_hcursor_get, "`pk`"),
        ];
        for (what, f, last) in steps {
            let needles = ["`row`", "`session`", "`cursor`", last];
            ladder(what, true, &needles, |k, e| {
                let rr = pick(k > 0, &raw mut row, null_mut());
                let ss = pick(k > 1, s, null_mut());
                let cc = pick(k > 2, cur, null_mut());
                f(ss, cc, null(), 3, rr, e)
            });
        }
        ladder(
            "unlock_current",
            true,
            &["`session`", "`cursor`"],
            |k, e| riptide_hcursor_unlock_current(pick(k > 0, s, null_mut()), null_mut(), e),
        );

        // A NULL errmsg gets the status alone; the accessors and destructors are not counted.
        let before = riptide_handler_calls();
        let st = riptide_hsession_commit(null_mut(), null_mut());
        assert_eq!(st, INVALID);
        assert_eq!(riptide_handler_calls() - before, 1);
        let before = riptide_handler_calls();
        riptide_hsession_has_snapshot(s);
        riptide_hsession_approximate_memory(s);
        riptide_hsession_clear_interrupt(s);
        riptide_htable_index_count(tab);
        riptide_htable_cap_autoinc(tab, 1 << 40);
        riptide_hcursor_set_keys_only(s, cur, false);
        riptide_hcursor_reset(cur);
        riptide_hcursor_destroy(cur);
        riptide_hsession_destroy(s);
        assert_eq!(riptide_handler_calls(), before);
    }
}
