//! The handler ABI (`riptide_handler_*`, `riptide_htable_*`, `riptide_hsession_*`): create a
//! table with a unique secondary index, insert, read by secondary index, duplicate keys with
//! the index number, statement rollback, drop.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::c_char;
use std::ptr::{null, null_mut};

use common::{TestDb, check};
use riptide_capi::*;

fn key(b: &[u8]) -> riptide_hkey_t {
    riptide_hkey_t {
        data: b.as_ptr().cast(),
        len: b.len(),
        has_null: false,
    }
}

#[test]
fn a_table_with_a_unique_index_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let specs = [
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_PRIMARY,
                unique: true,
                key_parts: 1,
                name: c"PRIMARY".as_ptr(),
            },
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_SECONDARY,
                unique: true,
                key_parts: 1,
                name: c"u".as_ptr(),
            },
        ];
        let name = b"./db/t";
        let mut tab = create_table(h, name, &specs);
        assert_eq!(riptide_htable_index_count(tab), 2);
        assert_eq!(riptide_htable_key_format(tab), 0);
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_REPEATABLE_READ, 1000, &mut s, &mut err),
            err,
        );
        check(riptide_hsession_begin_statement(s, &mut err), err);
        let mut dup = usize::MAX;
        let k1 = [key(b"a")];
        check(
            riptide_hsession_insert(
                s,
                tab,
                c"1".as_ptr(),
                1,
                k1.as_ptr(),
                1,
                c"row".as_ptr(),
                3,
                null_mut(),
                &mut dup,
                &mut err,
            ),
            err,
        );
        let st = riptide_hsession_insert(
            s,
            tab,
            c"2".as_ptr(),
            1,
            k1.as_ptr(),
            1,
            null(),
            0,
            null_mut(),
            &mut dup,
            &mut err,
        );
        assert_eq!(st, riptide_status_t::RIPTIDE_DUPLICATE_KEY);
        assert_eq!(dup, 1);
        riptide_free(err.cast());
        err = null_mut();
        check(riptide_hsession_end_statement(s, false, &mut err), err);
        // The statement is undone: insert again and commit.
        check(
            riptide_hsession_insert(
                s,
                tab,
                c"1".as_ptr(),
                1,
                k1.as_ptr(),
                1,
                c"row".as_ptr(),
                3,
                null_mut(),
                &mut dup,
                &mut err,
            ),
            err,
        );
        // Read back through the secondary index, by its key tuple: one call per row, the
        // entry decoded into (key tuple, primary key) and the row read.
        let mut cur = null_mut();
        check(riptide_hcursor_create(tab, 1, &mut cur, &mut err), err);
        let mut row = std::mem::zeroed::<riptide_hrow_t>();
        check(
            riptide_hcursor_seek(
                s,
                cur,
                c"a".as_ptr(),
                1,
                RIPTIDE_HSEEK_AT_OR_AFTER,
                true,
                &mut row,
                &mut err,
            ),
            err,
        );
        assert!(row.found);
        let bytes_of = |p: *const c_char, n: usize| std::slice::from_raw_parts(p.cast::<u8>(), n);
        assert_eq!(bytes_of(row.pk, row.pk_len), b"1");
        assert_eq!(bytes_of(row.key, row.key_len), b"a");
        assert_eq!(bytes_of(row.row, row.row_len), b"row");
        let calls = riptide_handler_calls();
        check(
            riptide_hcursor_next(s, cur, null(), 0, &mut row, &mut err),
            err,
        );
        assert!(!row.found);
        assert!(riptide_handler_calls() > calls);
        // Past the only key: an exact seek of another value finds nothing.
        check(
            riptide_hcursor_seek(
                s,
                cur,
                c"b".as_ptr(),
                1,
                RIPTIDE_HSEEK_AT_OR_AFTER,
                true,
                &mut row,
                &mut err,
            ),
            err,
        );
        assert!(!row.found);
        let st = riptide_hcursor_seek(s, cur, null(), 0, 9, false, &mut row, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        riptide_hcursor_destroy(cur);
        let (mut v, mut vlen, mut found) = (null_mut(), 0, false);
        check(
            riptide_hsession_get_row(
                s,
                tab,
                c"1".as_ptr(),
                1,
                RIPTIDE_ROW_LOCK_EXCLUSIVE,
                &mut v,
                &mut vlen,
                &mut found,
                &mut err,
            ),
            err,
        );
        assert!(found);
        assert_eq!(std::slice::from_raw_parts(v.cast::<u8>(), vlen), b"row");
        riptide_free_value(v, vlen);
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);
        assert_eq!(riptide_htable_row_estimate(tab), 1);
        let mut first = 0;
        check(
            riptide_htable_reserve_autoinc(tab, 3, 1, 1, &mut first, &mut err),
            err,
        );
        assert_eq!(first, 1);
        assert_eq!(riptide_htable_autoinc_next(tab), 4);
        let mut n = 0;
        check(
            riptide_htable_estimate_range(
                tab,
                1,
                null(),
                0,
                false,
                null(),
                0,
                false,
                100,
                &mut n,
                &mut err,
            ),
            err,
        );
        assert_eq!(n, 1);
        riptide_htable_release(tab);
        // The temporary mark of an ALTER TABLE copy's target: set, then removed.
        for temporary in [true, false] {
            check(
                riptide_handler_mark_temporary(
                    h,
                    name.as_ptr().cast(),
                    name.len(),
                    temporary,
                    &mut err,
                ),
                err,
            );
        }
        let mut existed = false;
        check(
            riptide_handler_drop_table(h, name.as_ptr().cast(), name.len(), &mut existed, &mut err),
            err,
        );
        assert!(existed);
        let st =
            riptide_handler_mark_temporary(h, name.as_ptr().cast(), name.len(), true, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_NOT_FOUND);
        riptide_free(err.cast());
        err = null_mut();
        let st =
            riptide_handler_open_table(h, name.as_ptr().cast(), name.len(), &mut tab, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_NOT_FOUND);
        riptide_free(err.cast());
        err = null_mut();
        check(riptide_handler_close(h, &mut err), err);
        riptide_handler_destroy(h);
    }
}

/// Key callback of the check test: the row's bytes are its one secondary key.
unsafe extern "C" fn row_is_key(
    _ctx: *mut std::ffi::c_void,
    _pk: *const c_char,
    _pk_len: usize,
    row: *const c_char,
    row_len: usize,
    keys: *mut riptide_hkey_t,
    nkeys: usize,
) -> bool {
    if nkeys != 1 {
        return false;
    }
    // SAFETY: the check passes `nkeys` (1) writable keys; `row` stays readable until the
    // next call, which is as long as the key must live.
    unsafe {
        keys.write(riptide_hkey_t {
            data: row,
            len: row_len,
            has_null: false,
        });
    }
    true
}

#[test]
fn check_analyze_optimize_and_a_snapshot_taken_at_begin_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let specs = [
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_PRIMARY,
                unique: true,
                key_parts: 1,
                name: c"PRIMARY".as_ptr(),
            },
            riptide_index_spec_t {
                kind: RIPTIDE_INDEX_SECONDARY,
                unique: false,
                key_parts: 1,
                name: c"k".as_ptr(),
            },
        ];
        let name = b"./db/c";
        let tab = create_table(h, name, &specs);
        // A session whose snapshot is taken at begin does not see a later commit.
        let mut snap = null_mut();
        check(
            riptide_hsession_begin_snapshot(
                h,
                RIPTIDE_HISO_REPEATABLE_READ,
                1000,
                &mut snap,
                &mut err,
            ),
            err,
        );
        assert!(riptide_hsession_has_snapshot(snap));
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_REPEATABLE_READ, 1000, &mut s, &mut err),
            err,
        );
        assert!(!riptide_hsession_has_snapshot(s));
        for (pk, row) in [(c"1", c"a"), (c"2", c"b")] {
            let keys = [key(row.to_bytes())];
            check(
                riptide_hsession_insert(
                    s,
                    tab,
                    pk.as_ptr(),
                    1,
                    keys.as_ptr(),
                    1,
                    row.as_ptr(),
                    1,
                    null_mut(),
                    null_mut(),
                    &mut err,
                ),
                err,
            );
        }
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);
        let (mut v, mut vlen, mut found) = (null_mut(), 0, true);
        check(
            riptide_hsession_get_row(
                snap,
                tab,
                c"1".as_ptr(),
                1,
                RIPTIDE_ROW_LOCK_NONE,
                &mut v,
                &mut vlen,
                &mut found,
                &mut err,
            ),
            err,
        );
        assert!(!found, "the snapshot was taken before the commit");
        riptide_free_value(v, vlen);
        check(riptide_hsession_rollback(snap, &mut err), err);
        riptide_hsession_destroy(snap);

        // CHECK TABLE: consistent.
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_REPEATABLE_READ, 1000, &mut s, &mut err),
            err,
        );
        let (mut problems, mut report) = (u64::MAX, null_mut());
        check(
            riptide_hsession_check_table(
                s,
                tab,
                Some(row_is_key),
                null_mut(),
                10,
                &mut problems,
                &mut report,
                &mut err,
            ),
            err,
        );
        assert_eq!(problems, 0);
        assert!(report.is_null());
        // A row whose stored value no longer matches its entry ("b" -> "z", entry kept).
        let keys = [key(b"b")];
        check(
            riptide_hsession_update(
                s,
                tab,
                c"2".as_ptr(),
                1,
                keys.as_ptr(),
                c"2".as_ptr(),
                1,
                keys.as_ptr(),
                1,
                c"z".as_ptr(),
                1,
                null_mut(),
                null_mut(),
                &mut err,
            ),
            err,
        );
        check(
            riptide_hsession_check_table(
                s,
                tab,
                Some(row_is_key),
                null_mut(),
                10,
                &mut problems,
                &mut report,
                &mut err,
            ),
            err,
        );
        assert_eq!(
            problems, 2,
            "the row lacks entry z, entry b mismatches its row"
        );
        let text = std::ffi::CStr::from_ptr(report)
            .to_string_lossy()
            .into_owned();
        riptide_free(report.cast());
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|l| l.starts_with("index `k`: ")), "{text}");
        let st = riptide_hsession_check_table(
            s,
            tab,
            None,
            null_mut(),
            10,
            &mut problems,
            &mut report,
            &mut err,
        );
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        check(riptide_hsession_rollback(s, &mut err), err);
        riptide_hsession_destroy(s);

        // ANALYZE and OPTIMIZE.
        let mut rows = 0;
        check(
            riptide_htable_refresh_statistics(tab, &mut rows, &mut err),
            err,
        );
        assert_eq!(rows, 2);
        assert_eq!(riptide_htable_row_estimate(tab), 2);
        // ANALYZE's index statistics: none yet; stored, read back whole or in part.
        assert_eq!(riptide_htable_index_stats(tab, null_mut(), 0), 0);
        let stats = [2u64, 2, 1];
        check(
            riptide_htable_set_index_stats(tab, stats.as_ptr(), stats.len(), &mut err),
            err,
        );
        let mut back = [0u64; 3];
        assert_eq!(riptide_htable_index_stats(tab, back.as_mut_ptr(), 3), 3);
        assert_eq!(back, stats);
        let mut first = [0u64; 1];
        assert_eq!(riptide_htable_index_stats(tab, first.as_mut_ptr(), 1), 3);
        assert_eq!(first, [2]);
        assert_eq!(riptide_htable_index_stats(null(), back.as_mut_ptr(), 3), 0);
        // NULL with a count, and too many: refused, the stored ones stay.
        let st = riptide_htable_set_index_stats(tab, null(), 2, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        let many = vec![1u64; RIPTIDE_INDEX_STATS_MAX + 1];
        let st = riptide_htable_set_index_stats(tab, many.as_ptr(), many.len(), &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        assert_eq!(riptide_htable_index_stats(tab, null_mut(), 0), 3);
        check(riptide_htable_compact(tab, &mut err), err);
        let mut n = 0;
        check(
            riptide_htable_estimate_range(
                tab,
                1,
                null(),
                0,
                false,
                null(),
                0,
                false,
                100,
                &mut n,
                &mut err,
            ),
            err,
        );
        assert_eq!(n, 2);
        // ANALYZE's sample places: a buffer of length-prefixed tuples (at most as many as
        // asked), freed by the caller; NULL out-parameters and an unknown index refused.
        let (mut buf, mut len) = (null_mut(), 0usize);
        check(
            riptide_htable_sample_index(tab, 1, 8, &mut buf, &mut len, &mut err),
            err,
        );
        let bytes: &[u8] = if buf.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(buf.cast::<u8>(), len)
        };
        let mut tuples = 0;
        let mut at = 0;
        while at < bytes.len() {
            let n = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            at += 4 + n;
            tuples += 1;
        }
        assert_eq!(at, bytes.len(), "the lengths cover the buffer exactly");
        assert!(
            (1..=8).contains(&tuples),
            "{tuples} places from the compacted table"
        );
        riptide_free_value(buf, len);
        let st = riptide_htable_sample_index(tab, 1, 8, null_mut(), &mut len, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        let st = riptide_htable_sample_index(tab, 9, 8, &mut buf, &mut len, &mut err);
        assert_ne!(st, riptide_status_t::RIPTIDE_OK);
        assert!(buf.is_null() && len == 0);
        riptide_free(err.cast());
        err = null_mut();
        riptide_htable_release(tab);
        check(riptide_handler_close(h, &mut err), err);
        riptide_handler_destroy(h);
    }
}

#[test]
fn a_prepared_session_is_listed_and_committed_by_xid_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let name = b"./db/xa";
        let tab = create_pk_table(h, name);
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_REPEATABLE_READ, 1000, &mut s, &mut err),
            err,
        );
        let mut dup = usize::MAX;
        check(
            riptide_hsession_insert(
                s,
                tab,
                c"1".as_ptr(),
                1,
                null(),
                0,
                c"row".as_ptr(),
                3,
                null_mut(),
                &mut dup,
                &mut err,
            ),
            err,
        );
        // An empty gtrid is refused; the session stays usable.
        let st = riptide_hsession_prepare(s, 1, c"".as_ptr(), 0, null(), 0, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        check(
            riptide_hsession_prepare(s, 1, c"gx".as_ptr(), 2, c"b".as_ptr(), 1, &mut err),
            err,
        );
        // Destroyed while prepared: it stays prepared.
        riptide_hsession_destroy(s);
        let mut xids = null_mut();
        let mut n = 0;
        check(
            riptide_prepared_list(t.db, &mut xids, &mut n, &mut err),
            err,
        );
        assert_eq!(n, 1);
        let x = &*xids;
        assert_eq!((x.format_id, x.gtrid_len, x.bqual_len), (1, 2, 1));
        assert_eq!(&x.gtrid[..2], b"gx");
        assert_eq!(x.bqual[0], b'b');
        riptide_free(xids.cast());
        check(
            riptide_commit_prepared(t.db, 1, c"gx".as_ptr(), 2, c"b".as_ptr(), 1, &mut err),
            err,
        );
        let st = riptide_commit_prepared(t.db, 1, c"gx".as_ptr(), 2, c"b".as_ptr(), 1, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_NOT_FOUND);
        riptide_free(err.cast());
        err = null_mut();
        // The row is there.
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_REPEATABLE_READ, 1000, &mut s, &mut err),
            err,
        );
        let mut v = null_mut();
        let mut len = 0;
        let mut found = false;
        check(
            riptide_hsession_get_row(
                s,
                tab,
                c"1".as_ptr(),
                1,
                RIPTIDE_ROW_LOCK_NONE,
                &mut v,
                &mut len,
                &mut found,
                &mut err,
            ),
            err,
        );
        assert!(found);
        assert_eq!(std::slice::from_raw_parts(v.cast::<u8>(), len), b"row");
        riptide_free_value(v, len);
        riptide_hsession_destroy(s);
        riptide_htable_release(tab);
        riptide_handler_destroy(h);
    }
}

#[test]
fn caller_data_recorded_by_a_build_is_read_back_from_the_table_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let name = b"./db/layout";
        let mut tab = create_pk_table(h, name);
        let (mut data, mut len): (*const u8, usize) = (null(), usize::MAX);
        riptide_htable_caller_data(tab, &mut data, &mut len);
        assert_eq!(len, 0, "a new table has no caller data");
        riptide_htable_release(tab);

        // A build adding no index records the bytes with its commit.
        let mut build = null_mut();
        check(
            riptide_handler_begin_index_build(
                h,
                name.as_ptr().cast(),
                name.len(),
                null(),
                0,
                &mut build,
                &mut err,
            ),
            err,
        );
        let bytes = b"\x01layout";
        check(
            riptide_hbuild_set_caller_data(build, bytes.as_ptr().cast(), bytes.len(), &mut err),
            err,
        );
        let order = [riptide_index_slot_t {
            is_new: false,
            position: 0,
        }];
        check(
            riptide_handler_commit_index_build(h, build, order.as_ptr(), 1, null(), 0, &mut err),
            err,
        );
        check(
            riptide_handler_open_table(h, name.as_ptr().cast(), name.len(), &mut tab, &mut err),
            err,
        );
        riptide_htable_caller_data(tab, &mut data, &mut len);
        assert_eq!(std::slice::from_raw_parts(data, len), bytes);
        // NULL out-parameters are skipped; a NULL table has none.
        riptide_htable_caller_data(tab, null_mut(), null_mut());
        riptide_htable_caller_data(null(), &mut data, &mut len);
        assert_eq!(len, 0);
        riptide_htable_release(tab);

        // A NULL build is refused with a message, not a crash.
        let st = riptide_hbuild_set_caller_data(null_mut(), bytes.as_ptr().cast(), 1, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        assert!(!err.is_null());
        riptide_free(err.cast());
        err = null_mut();
        check(riptide_handler_close(h, &mut err), err);
        riptide_handler_destroy(h);
    }
}

/// A bulk load held across sessions through the C ABI (what the MariaDB plugin does for
/// autocommit statements): taken out of one session before it commits, its rows are
/// invisible; a second session takes it up and its commit writes them.
#[test]
fn a_bulk_load_held_across_sessions_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first; the
    // held load is given to the second session, which takes it.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let name = b"./db/bulk";
        let tab = create_pk_table(h, name);
        let get = |s: *mut riptide_hsession_t, pk: &[u8]| -> bool {
            let (mut v, mut vlen, mut found, mut e) = (null_mut(), 0, false, null_mut());
            check(
                riptide_hsession_get_row(
                    s,
                    tab,
                    pk.as_ptr().cast(),
                    pk.len(),
                    RIPTIDE_ROW_LOCK_NONE,
                    &mut v,
                    &mut vlen,
                    &mut found,
                    &mut e,
                ),
                e,
            );
            riptide_free_value(v, vlen);
            found
        };
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_READ_COMMITTED, 1000, &mut s, &mut err),
            err,
        );
        // Nothing loaded yet: nothing to hold.
        let mut bulk = null_mut();
        check(
            riptide_hsession_detach_bulk_load(s, &mut bulk, &mut err),
            err,
        );
        assert!(bulk.is_null());
        check(riptide_hsession_set_bulk_load(s, true, &mut err), err);
        for pk in [b"1", b"2", b"3"] {
            check(
                riptide_hsession_insert(
                    s,
                    tab,
                    pk.as_ptr().cast(),
                    1,
                    null(),
                    0,
                    c"row".as_ptr(),
                    3,
                    null_mut(),
                    null_mut(),
                    &mut err,
                ),
                err,
            );
        }
        check(
            riptide_hsession_detach_bulk_load(s, &mut bulk, &mut err),
            err,
        );
        assert!(!bulk.is_null());
        assert_eq!(riptide_hbulk_rows(bulk), 3);
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);

        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_READ_COMMITTED, 1000, &mut s, &mut err),
            err,
        );
        assert!(!get(s, b"2"), "a held load's rows are invisible");
        check(riptide_hsession_attach_bulk_load(s, bulk, &mut err), err);
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);

        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_READ_COMMITTED, 1000, &mut s, &mut err),
            err,
        );
        assert!(get(s, b"1") && get(s, b"2") && get(s, b"3"));
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);
        assert_eq!(riptide_htable_row_estimate(tab), 3);
        riptide_htable_release(tab);
        check(riptide_handler_close(h, &mut err), err);
        riptide_handler_destroy(h);
    }
}

/// Creates table `name` with the indexes `specs` (the first one primary) through handler
/// `h` and opens it.
///
/// # Safety
///
/// `h` is a live handler handle; every spec's `name` is NULL or NUL-terminated; the table
/// handle returned is released by the caller.
unsafe fn create_table(
    h: *mut riptide_handler_t,
    name: &[u8],
    specs: &[riptide_index_spec_t],
) -> *mut riptide_htable_t {
    let mut err: *mut c_char = null_mut();
    let mut tab = null_mut();
    // SAFETY: `h` is live and the specs' names are valid (this function's contract);
    // `specs` and `name` are readable for their lengths; `tab` and `err` are local
    // out-parameters.
    unsafe {
        check(
            riptide_handler_create_table(
                h,
                name.as_ptr().cast(),
                name.len(),
                specs.as_ptr(),
                specs.len(),
                1,
                &mut err,
            ),
            err,
        );
        check(
            riptide_handler_open_table(h, name.as_ptr().cast(), name.len(), &mut tab, &mut err),
            err,
        );
    }
    tab
}

/// Creates table `name` with a primary key alone through handler `h` and opens it.
///
/// # Safety
///
/// `h` is a live handler handle; the table handle returned is released by the caller.
unsafe fn create_pk_table(h: *mut riptide_handler_t, name: &[u8]) -> *mut riptide_htable_t {
    let specs = [riptide_index_spec_t {
        kind: RIPTIDE_INDEX_PRIMARY,
        unique: true,
        key_parts: 1,
        name: c"PRIMARY".as_ptr(),
    }];
    // SAFETY: `h` is live (this function's contract); the spec's name is a C string literal.
    unsafe { create_table(h, name, &specs) }
}

/// An online index build through the C ABI: the table records the row a session inserts
/// during the build; the build gives its primary key after the finish, applies the change,
/// and commits; misuse gets an error, not a crash.
#[test]
fn an_online_index_build_through_the_c_abi() {
    let t = TestDb::open();
    let mut err: *mut c_char = null_mut();
    let mut h = null_mut();
    // SAFETY: every pointer below is a live handle or a local out-parameter, every byte
    // string is readable for its length, and handles are freed once, children first.
    unsafe {
        check(riptide_handler_open(t.db, &mut h, &mut err), err);
        let name = b"./db/online";
        let tab = create_pk_table(h, name);
        let new = [riptide_new_index_t {
            spec: riptide_index_spec_t {
                kind: RIPTIDE_INDEX_SECONDARY,
                unique: false,
                key_parts: 1,
                name: c"b".as_ptr(),
            },
            null_offsets: null(),
            n_null_offsets: 0,
        }];
        let mut build = null_mut();
        check(
            riptide_handler_begin_index_build(
                h,
                name.as_ptr().cast(),
                name.len(),
                new.as_ptr(),
                1,
                &mut build,
                &mut err,
            ),
            err,
        );
        check(riptide_hbuild_capture_changes(h, build, &mut err), err);
        let mut s = null_mut();
        check(
            riptide_hsession_begin(h, RIPTIDE_HISO_READ_COMMITTED, 1000, &mut s, &mut err),
            err,
        );
        check(
            riptide_hsession_insert(
                s,
                tab,
                c"z".as_ptr(),
                1,
                null(),
                0,
                c"row".as_ptr(),
                3,
                null_mut(),
                null_mut(),
                &mut err,
            ),
            err,
        );
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);
        // Before the finish, a change is refused.
        let st = riptide_hbuild_apply_change(
            build,
            0,
            null(),
            0,
            c"k".as_ptr(),
            1,
            c"z".as_ptr(),
            1,
            &mut err,
        );
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        let (mut dup_index, mut dup_pk, mut dup_len) = (0, null_mut(), 0);
        check(
            riptide_hbuild_finish(build, &mut dup_index, &mut dup_pk, &mut dup_len, &mut err),
            err,
        );
        let mut count = 0;
        check(
            riptide_hbuild_take_changed_rows(build, &mut count, &mut err),
            err,
        );
        assert_eq!(count, 1);
        let (mut pk, mut pk_len) = (null(), 0);
        check(
            riptide_hbuild_changed_row(build, 0, &mut pk, &mut pk_len, &mut err),
            err,
        );
        assert_eq!(std::slice::from_raw_parts(pk.cast::<u8>(), pk_len), b"z");
        let st = riptide_hbuild_changed_row(build, 1, &mut pk, &mut pk_len, &mut err);
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        // A NULL key with a length is refused; NULL and 0 is "no row".
        let st = riptide_hbuild_apply_change(
            build,
            0,
            null(),
            3,
            c"k".as_ptr(),
            1,
            c"z".as_ptr(),
            1,
            &mut err,
        );
        assert_eq!(st, riptide_status_t::RIPTIDE_INVALID_ARGUMENT);
        riptide_free(err.cast());
        err = null_mut();
        check(
            riptide_hbuild_apply_change(
                build,
                0,
                null(),
                0,
                c"k".as_ptr(),
                1,
                c"z".as_ptr(),
                1,
                &mut err,
            ),
            err,
        );
        let order = [
            riptide_index_slot_t {
                is_new: false,
                position: 0,
            },
            riptide_index_slot_t {
                is_new: true,
                position: 0,
            },
        ];
        check(
            riptide_handler_commit_index_build(h, build, order.as_ptr(), 2, null(), 0, &mut err),
            err,
        );
        riptide_htable_release(tab);
        let mut tab = null_mut();
        check(
            riptide_handler_open_table(h, name.as_ptr().cast(), name.len(), &mut tab, &mut err),
            err,
        );
        assert_eq!(riptide_htable_index_count(tab), 2);
        riptide_htable_release(tab);
        check(riptide_handler_close(h, &mut err), err);
        riptide_handler_destroy(h);
    }
}
