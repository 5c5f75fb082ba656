//! `riptide_db_set_option`: an open database takes new values of the options flagged
//! `RIPTIDE_OPTION_DYNAMIC`; it refuses the others (`RIPTIDE_NOT_SUPPORTED`), values it could
//! not run with and unknown names (`RIPTIDE_INVALID_ARGUMENT`), NULL arguments, and a closed
//! database (`RIPTIDE_CLOSED`).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::CStr;
use std::ptr::null_mut;

use common::{TestDb, check, expect};
use riptide_capi::*;
use riptide_status_t::{
    RIPTIDE_CLOSED as CLOSED, RIPTIDE_INVALID_ARGUMENT as INVALID,
    RIPTIDE_NOT_SUPPORTED as NOT_SUPPORTED,
};

#[test]
fn an_open_database_takes_its_dynamic_options() {
    let t = TestDb::open();
    let mut err = null_mut();
    // SAFETY: `t.db` is live until `t` drops; the strings are NUL-terminated literals or
    // entries of the option table (static); `err` is a local out-parameter.
    unsafe {
        check(
            riptide_db_set_option(
                t.db,
                c"compaction_pri".as_ptr(),
                c"round_robin".as_ptr(),
                &mut err,
            ),
            err,
        );
        check(
            riptide_db_set_option(
                t.db,
                c"l0_compaction_trigger".as_ptr(),
                c"8".as_ptr(),
                &mut err,
            ),
            err,
        );
        let st = riptide_db_set_option(
            t.db,
            c"write_buffer_size".as_ptr(),
            c"8M".as_ptr(),
            &mut err,
        );
        expect(st, err, NOT_SUPPORTED, "write_buffer_size");
        let st = riptide_db_set_option(
            t.db,
            c"l0_compaction_trigger".as_ptr(),
            c"1000".as_ptr(),
            &mut err,
        );
        expect(st, err, INVALID, "l0_stop_trigger");
        let st = riptide_db_set_option(t.db, c"no_such_option".as_ptr(), c"1".as_ptr(), &mut err);
        expect(st, err, INVALID, "no_such_option");
        let st = riptide_db_set_option(t.db, null_mut(), c"1".as_ptr(), &mut err);
        expect(st, err, INVALID, "`name`");
        let st = riptide_db_set_option(t.db, c"compaction_pri".as_ptr(), null_mut(), &mut err);
        expect(st, err, INVALID, "`value`");
        let st = riptide_db_set_option(
            null_mut(),
            c"compaction_pri".as_ptr(),
            c"round_robin".as_ptr(),
            &mut err,
        );
        expect(st, err, INVALID, "`db`");

        // Every option the table flags dynamic takes its default back.
        for i in 0..riptide_option_count() {
            let o = &*riptide_option_at(i);
            if o.flags & RIPTIDE_OPTION_DYNAMIC == 0 {
                continue;
            }
            let st = riptide_db_set_option(t.db, o.name, o.default_text, &mut err);
            let name = CStr::from_ptr(o.name).to_string_lossy();
            assert_eq!(st, riptide_status_t::RIPTIDE_OK, "{name}");
        }

        check(riptide_db_close(t.db, &mut err), err);
        let st = riptide_db_set_option(
            t.db,
            c"compaction_pri".as_ptr(),
            c"round_robin".as_ptr(),
            &mut err,
        );
        expect(st, err, CLOSED, "closed");
    }
}

/// `riptide_db_option_value` of `name` as a Rust string (the call must succeed).
///
/// # Safety
///
/// `db` is a live database handle.
unsafe fn value_of(db: *mut riptide_db_t, name: &CStr) -> String {
    let (mut v, mut err) = (null_mut(), null_mut());
    // SAFETY: `db` is live per this function's contract; `name` is NUL-terminated; the
    // out-parameters are locals; `v` is freed once read.
    unsafe {
        check(
            riptide_db_option_value(db, name.as_ptr(), &mut v, &mut err),
            err,
        );
        let text = CStr::from_ptr(v).to_string_lossy().into_owned();
        riptide_free(v.cast());
        text
    }
}

#[test]
fn an_open_database_tells_every_options_value() {
    let t = TestDb::open();
    let mut err = null_mut();
    // SAFETY: `t.db` is live until `t` drops; names come from the option table (static) or
    // NUL-terminated literals; out-parameters are locals.
    unsafe {
        // What it was opened with (TestDb sets sync_mode), the defaults otherwise.
        assert_eq!(value_of(t.db, c"sync_mode"), "none");
        assert_eq!(value_of(t.db, c"compaction_pri"), "min_overlapping_ratio");
        for i in 0..riptide_option_count() {
            let o = &*riptide_option_at(i);
            let name = CStr::from_ptr(o.name);
            let value = value_of(t.db, name);
            if name != c"sync_mode" {
                assert_eq!(
                    value,
                    CStr::from_ptr(o.default_text).to_string_lossy(),
                    "{name:?}"
                );
            }
        }
        // A change shows at once.
        check(
            riptide_db_set_option(
                t.db,
                c"l0_compaction_trigger".as_ptr(),
                c"9".as_ptr(),
                &mut err,
            ),
            err,
        );
        assert_eq!(value_of(t.db, c"l0_compaction_trigger"), "9");
        check(
            riptide_db_set_option(
                t.db,
                c"target_file_size".as_ptr(),
                c"16M".as_ptr(),
                &mut err,
            ),
            err,
        );
        assert_eq!(
            value_of(t.db, c"target_file_size"),
            (16u64 << 20).to_string()
        );

        let mut v = null_mut();
        let st = riptide_db_option_value(t.db, c"no_such_option".as_ptr(), &mut v, &mut err);
        expect(st, err, INVALID, "no_such_option");
        assert!(v.is_null());
        let st = riptide_db_option_value(t.db, null_mut(), &mut v, &mut err);
        expect(st, err, INVALID, "`name`");
        let st = riptide_db_option_value(t.db, c"sync_mode".as_ptr(), null_mut(), &mut err);
        expect(st, err, INVALID, "`value`");
        let st = riptide_db_option_value(null_mut(), c"sync_mode".as_ptr(), &mut v, &mut err);
        expect(st, err, INVALID, "`db`");
    }
}
