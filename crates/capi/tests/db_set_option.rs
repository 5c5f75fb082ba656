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
        let st =
            riptide_db_set_option(t.db, c"block_cache_size".as_ptr(), c"1G".as_ptr(), &mut err);
        expect(st, err, NOT_SUPPORTED, "block_cache_size");
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
