//! `riptide_db_transactions`, `riptide_handler_locks` and `riptide_hsession_set_owner`
//! through the C ABI: the lists, their rows, their strings and keys, NULL arguments.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ffi::CStr;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use common::{TestHandler, check, expect};
use riptide_capi::*;
use riptide_status_t::RIPTIDE_INVALID_ARGUMENT as INVALID;

/// A C string of a row as a Rust string (None for NULL).
///
/// # Safety
///
/// `p` is NULL or a NUL-terminated string.
unsafe fn text(p: *const std::ffi::c_char) -> Option<String> {
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A session handle moved to the thread that alone uses it while the test waits.
struct OwnedSession(*mut riptide_hsession_t);

// SAFETY: the session is used by one thread at a time: the spawned thread while it runs,
// the test thread after joining it.
unsafe impl Send for OwnedSession {}

#[test]
fn transactions_and_locks_are_listed_with_their_owner() {
    let t = TestHandler::open();
    let mut err = null_mut();
    let holder = t.begin();
    let waiter = t.begin();
    // SAFETY: the handles are live until destroyed below; every out-parameter is a local;
    // the lists are read before they are destroyed.
    unsafe {
        check(riptide_hsession_set_owner(holder, 101, &mut err), err);
        check(riptide_hsession_set_owner(waiter, 202, &mut err), err);
        let (st, ..) = t.get_row(holder, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE);
        assert_eq!(st, riptide_status_t::RIPTIDE_OK);

        let mut trx = null_mut();
        check(riptide_db_transactions(t.db.db, &mut trx, &mut err), err);
        let n = riptide_trx_list_count(trx);
        assert_eq!(n, 2);
        let owners: Vec<u64> = (0..n)
            .map(|i| (*riptide_trx_list_at(trx, i)).owner)
            .collect();
        assert_eq!(owners, vec![101, 202]);
        let h = &*riptide_trx_list_at(trx, 0);
        assert_eq!(text(h.state).as_deref(), Some("ACTIVE"));
        assert_eq!(text(h.isolation).as_deref(), Some("REPEATABLE READ"));
        assert!(!h.optimistic);
        assert_eq!(h.row_locks, 1);
        assert_eq!(h.writes, 0);
        assert!(riptide_trx_list_at(trx, n).is_null());
        riptide_trx_list_destroy(trx);

        // The waiter blocks on row 2 in another thread; the lock list shows both.
        std::thread::scope(|s| {
            let moved = OwnedSession(waiter);
            let t = &t;
            let w = s.spawn(move || {
                let moved = moved;
                t.get_row(moved.0, b"2", RIPTIDE_ROW_LOCK_SHARED).0
            });
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let mut locks = null_mut();
                check(riptide_handler_locks(t.h, 0, &mut locks, &mut err), err);
                assert!(!riptide_lock_list_truncated(locks));
                let rows: Vec<&riptide_lock_info_t> = (0..riptide_lock_list_count(locks))
                    .map(|i| &*riptide_lock_list_at(locks, i))
                    .collect();
                if let Some(wl) = rows.iter().find(|l| l.waiting) {
                    assert_eq!(wl.owner, 202);
                    assert_eq!(text(wl.mode).as_deref(), Some("S"));
                    assert_eq!(text(wl.lock_type).as_deref(), Some("RECORD"));
                    assert_eq!(text(wl.table).as_deref(), Some("./db/t"));
                    assert_eq!(text(wl.index).as_deref(), Some("PRIMARY"));
                    assert_eq!(wl.start_bound, RIPTIDE_BOUND_INCLUDED);
                    assert_eq!(std::slice::from_raw_parts(wl.start, wl.start_len), b"2");
                    assert_eq!(wl.blocked_by_count, 1);
                    let hl = rows.iter().find(|l| l.owner == 101).unwrap();
                    assert_eq!(*wl.blocked_by, hl.txn);
                    assert!(!hl.waiting);
                    assert_eq!(text(hl.mode).as_deref(), Some("X"));
                    assert!(hl.blocked_by.is_null());
                    riptide_lock_list_destroy(locks);
                    break;
                }
                riptide_lock_list_destroy(locks);
                assert!(Instant::now() < deadline, "no waiting lock listed");
                std::thread::sleep(Duration::from_millis(5));
            }
            check(riptide_hsession_rollback(holder, &mut err), err);
            assert_eq!(w.join().unwrap(), riptide_status_t::RIPTIDE_OK);
        });

        // A limit truncates.
        let mut locks = null_mut();
        check(riptide_handler_locks(t.h, 1, &mut locks, &mut err), err);
        assert_eq!(riptide_lock_list_count(locks), 1);
        riptide_lock_list_destroy(locks);

        // NULL arguments.
        let st = riptide_db_transactions(null_mut(), &mut trx, &mut err);
        expect(st, err, INVALID, "`db`");
        let st = riptide_db_transactions(t.db.db, null_mut(), &mut err);
        expect(st, err, INVALID, "`list`");
        let st = riptide_handler_locks(null_mut(), 0, &mut locks, &mut err);
        expect(st, err, INVALID, "`handler`");
        let st = riptide_hsession_set_owner(null_mut(), 1, &mut err);
        expect(st, err, INVALID, "`session`");

        riptide_hsession_destroy(holder);
        check(riptide_hsession_rollback(waiter, &mut err), err);
        riptide_hsession_destroy(waiter);
        let mut trx = null_mut();
        check(riptide_db_transactions(t.db.db, &mut trx, &mut err), err);
        assert_eq!(riptide_trx_list_count(trx), 0);
        riptide_trx_list_destroy(trx);
    }
}

#[test]
fn background_jobs_are_listed() {
    let t = TestHandler::open();
    let mut err = null_mut();
    // SAFETY: `t.db.db` is live; out-parameters are locals; the list is read before it is
    // destroyed.
    unsafe {
        check(riptide_flush(t.db.db, &mut err), err);
        let mut list = null_mut();
        check(
            riptide_db_background_jobs(t.db.db, &mut list, &mut err),
            err,
        );
        let n = riptide_job_list_count(list);
        assert!(n >= 1);
        let rows: Vec<&riptide_job_info_t> =
            (0..n).map(|i| &*riptide_job_list_at(list, i)).collect();
        let flush = rows
            .iter()
            .find(|j| {
                text(j.kind).as_deref() == Some("FLUSH") && text(j.cf).as_deref() == Some("default")
            })
            .expect("a flush of the data");
        assert_eq!(text(flush.state).as_deref(), Some("DONE"));
        assert_eq!(text(flush.cf).as_deref(), Some("default"));
        assert_eq!(text(flush.reason).as_deref(), Some("frozen memtable"));
        assert_eq!(text(flush.input_levels).as_deref(), Some(""));
        assert!(flush.output_bytes > 0 && flush.duration_ms >= 0);
        assert!(flush.error.is_null());
        assert!(riptide_job_list_at(list, n).is_null());
        riptide_job_list_destroy(list);
        let st = riptide_db_background_jobs(null_mut(), &mut list, &mut err);
        expect(st, err, INVALID, "`db`");
    }
}

#[test]
fn tables_are_listed_with_their_indexes_and_sizes() {
    let t = TestHandler::open();
    let mut err = null_mut();
    // Enough rows for each index to span data blocks (sizes are at a block's resolution).
    let s = t.begin();
    for i in 0..3000u32 {
        t.insert(s, format!("row{i:06}").as_bytes());
    }
    // SAFETY: the handles are live; the out-parameters are locals; the lists are read
    // before they are destroyed.
    unsafe {
        check(riptide_hsession_commit(s, &mut err), err);
        riptide_hsession_destroy(s);
        // Flushed and compacted: the rows are in table files.
        check(riptide_htable_compact(t.tab, &mut err), err);
        let mut list = null_mut();
        check(riptide_handler_tables(t.h, &mut list, &mut err), err);
        assert_eq!(riptide_table_list_count(list), 2);
        let p = &*riptide_table_list_at(list, 0);
        let s = &*riptide_table_list_at(list, 1);
        assert!(riptide_table_list_at(list, 2).is_null());
        assert_eq!(text(p.table).as_deref(), Some("./db/t"));
        assert_eq!(text(p.index).as_deref(), Some("PRIMARY"));
        assert_eq!(text(p.kind).as_deref(), Some("PRIMARY"));
        assert!(p.unique);
        assert_eq!(text(s.index).as_deref(), Some("s"));
        assert_eq!(text(s.kind).as_deref(), Some("SECONDARY"));
        assert!(!s.unique);
        assert_ne!(p.index_id, s.index_id);
        assert_eq!((p.rows, s.rows), (3004, 3004));
        for info in [p, s] {
            assert!(info.levels >= 2, "{info:?}");
            let levels = std::slice::from_raw_parts(info.level_bytes, info.levels);
            let total: u64 = levels.iter().sum();
            assert!(total > 0, "{levels:?}");
        }
        riptide_table_list_destroy(list);

        // NULL arguments: refused with the parameter's name.
        let st = riptide_handler_tables(std::ptr::null(), &mut list, &mut err);
        expect(st, err, INVALID, "handler");
        assert!(list.is_null());
        err = null_mut();
        let st = riptide_handler_tables(t.h, null_mut(), &mut err);
        expect(st, err, INVALID, "list");
        assert_eq!(riptide_table_list_count(std::ptr::null()), 0);
        assert!(riptide_table_list_at(std::ptr::null(), 0).is_null());
        riptide_table_list_destroy(null_mut());
    }
}
