//! After `riptide_db_close`, the handle stays valid and every call on it fails with
//! `RIPTIDE_CLOSED`; closing twice is fine; handles made before the close stay safe to use
//! and to free.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ptr::{null, null_mut};

use common::{TestDb, check, expect};
use riptide_capi::*;
use riptide_status_t::{RIPTIDE_CLOSED as CLOSED, RIPTIDE_OK as OK};

#[test]
fn calls_on_a_closed_database_fail_with_closed() {
    let t = TestDb::open();
    t.put(b"k", b"v");
    let mut err = null_mut();
    let mut txn = null_mut();
    let mut snap = null_mut();
    let mut iter = null_mut();
    // SAFETY: `t.db` stays allocated until `t` drops; the other pointers are locals.
    unsafe {
        // Made before the close: a transaction, a snapshot, an iterator.
        check(riptide_txn_begin(t.db, null(), &mut txn, &mut err), err);
        check(riptide_snapshot_create(t.db, &mut snap, &mut err), err);
        check(
            riptide_iter_create(
                t.db,
                null(),
                snap,
                null(),
                0,
                null(),
                0,
                &mut iter,
                &mut err,
            ),
            err,
        );

        check(riptide_db_close(t.db, &mut err), err);
        assert_eq!(
            riptide_db_close(t.db, &mut err),
            OK,
            "closing twice is fine"
        );

        let (st, msg) = t.get(b"k").unwrap_err();
        assert_eq!(st, CLOSED);
        assert!(msg.contains("riptide_db_close"), "{msg}");
        let st = riptide_put(t.db, null(), c"k".as_ptr(), 1, null(), 0, &mut err);
        expect(st, err, CLOSED, "closed");
        let st = riptide_flush(t.db, &mut err);
        expect(st, err, CLOSED, "closed");
        let mut other = null_mut();
        let st = riptide_txn_begin(t.db, null(), &mut other, &mut err);
        expect(st, err, CLOSED, "closed");
        assert!(other.is_null());
        let st = riptide_snapshot_create(t.db, &mut other.cast(), &mut err);
        expect(st, err, CLOSED, "closed");
        let mut values = [riptide_stat_value_t { integer: 0 }; 1];
        let st = riptide_stats_fill(t.db, values.as_mut_ptr(), 1, &mut err);
        expect(st, err, CLOSED, "closed");

        // The transaction made before the close can no longer commit writes.
        let st = riptide_txn_put(txn, null(), c"t".as_ptr(), 1, null(), 0, &mut err);
        if st == OK {
            let st = riptide_txn_commit(txn, &mut err);
            expect(st, err, CLOSED, "closed");
        } else {
            expect(st, err, CLOSED, "closed");
        }
        // Everything made before the close is still safe to free, in any order.
        riptide_iter_destroy(iter);
        riptide_snapshot_release(snap);
        riptide_txn_destroy(txn);
    }
}
