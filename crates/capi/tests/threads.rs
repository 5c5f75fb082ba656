//! A database handle is shared by threads: concurrent writers and readers through one
//! `riptide_db_t *`, and a close that waits for them.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ptr::null;

use common::TestDb;
use riptide_capi::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_that_may_be_shared_are_send_and_sync() {
    assert_send_sync::<riptide_db_t>();
    assert_send_sync::<riptide_cf_t>();
    assert_send_sync::<riptide_snapshot_t>();
    assert_send_sync::<riptide_txn_t>();
}

/// The database pointer, handed to threads (the handle is `Sync`, checked above).
#[derive(Clone, Copy)]
struct Shared(*mut riptide_db_t);
// SAFETY: `riptide_db_t` is `Send + Sync` (asserted above); the pointer outlives the scoped
// threads that use it.
unsafe impl Send for Shared {}

#[test]
fn threads_write_and_read_through_one_handle() {
    let t = TestDb::open();
    let db = Shared(t.db);
    std::thread::scope(|s| {
        for w in 0..4u32 {
            s.spawn(move || {
                let db = db;
                for i in 0..200u32 {
                    let key = format!("w{w}-{i:04}");
                    let mut err = std::ptr::null_mut();
                    // SAFETY: the database outlives the scope; the key is readable.
                    let st = unsafe {
                        riptide_put(
                            db.0,
                            null(),
                            key.as_ptr().cast(),
                            key.len(),
                            key.as_ptr().cast(),
                            key.len(),
                            &mut err,
                        )
                    };
                    common::check(st, err);
                }
            });
        }
    });
    for w in 0..4u32 {
        for i in (0..200u32).step_by(37) {
            let key = format!("w{w}-{i:04}");
            assert_eq!(t.get(key.as_bytes()).unwrap(), Some(key.into_bytes()));
        }
    }
    let mut stats = riptide_stats_t::default();
    let mut err = std::ptr::null_mut();
    // SAFETY: `t.db` is live; `stats` is a local of the size passed.
    let st = unsafe {
        riptide_stats(
            t.db,
            &mut stats,
            std::mem::size_of::<riptide_stats_t>(),
            &mut err,
        )
    };
    common::check(st, err);
    assert_eq!(stats.keys_written, 800);
}
