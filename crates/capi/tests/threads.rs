//! A database handle is shared by threads: concurrent writers and readers through one
//! `riptide_db_t *`, and a close that waits for them. A session's interrupter fires from
//! another thread while the session waits for a lock, and after the session is gone.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use common::{TestDb, TestHandler};
use riptide_capi::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_that_may_be_shared_are_send_and_sync() {
    assert_send_sync::<riptide_db_t>();
    assert_send_sync::<riptide_cf_t>();
    assert_send_sync::<riptide_snapshot_t>();
    assert_send_sync::<riptide_txn_t>();
    assert_send_sync::<riptide_hinterrupt_t>();
}

/// A pointer handed to another thread (see each use for why that is sound).
#[derive(Clone, Copy)]
struct Ptr<T>(*mut T);
// SAFETY: each `Ptr` is used by one thread at a time (a session by its waiting thread) or
// points to a `Send + Sync` handle (the interrupter), and outlives the scoped threads.
unsafe impl<T> Send for Ptr<T> {}

/// The `lock_waits` statistic of `db`.
fn lock_waits(db: *mut riptide_db_t) -> u64 {
    common::stat(db, "lock_waits")
}

#[test]
fn an_interrupter_fires_from_another_thread_while_the_session_waits() {
    let t = TestHandler::open();
    let holder = t.begin();
    assert_eq!(
        t.get_row(holder, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
        riptide_status_t::RIPTIDE_OK
    );
    let s = t.begin();
    let mut intr = null_mut();
    let mut err = null_mut();
    // SAFETY: `s` is live; out-parameters are locals.
    unsafe {
        common::check(riptide_hsession_interrupter(s, &mut intr, &mut err), err);
    }
    let before = lock_waits(t.db.db);
    let (session, interrupter) = (Ptr(s), Ptr(intr));
    let t = &t;
    let (status, took) = std::thread::scope(|scope| {
        // The session's own thread: waits for row 2.
        let waiter = scope.spawn(move || {
            let session = session;
            let r = t.get_row(session.0, b"2", RIPTIDE_ROW_LOCK_EXCLUSIVE);
            (r, Instant::now())
        });
        // Another thread (KILL QUERY): fires once the wait has begun.
        let killer = scope.spawn(move || {
            let interrupter = interrupter;
            let started = Instant::now();
            while lock_waits(t.db.db) == before {
                assert!(started.elapsed() < Duration::from_secs(60), "no wait began");
                std::thread::sleep(Duration::from_millis(1));
            }
            let fired = Instant::now();
            // SAFETY: the interrupter is live until after both threads end.
            unsafe { riptide_hinterrupt_fire(interrupter.0) };
            fired
        });
        let fired = killer.join().unwrap();
        let ((status, _, msg), returned) = waiter.join().unwrap();
        assert!(msg.contains("interrupted"), "{msg}");
        (status, returned.saturating_duration_since(fired))
    });
    assert_eq!(status, riptide_status_t::RIPTIDE_INTERRUPTED);
    assert!(
        took < Duration::from_millis(500),
        "returned {took:?} after the fire"
    );
    // The session goes on once re-armed; the interrupter outlives it harmlessly.
    // SAFETY: the handles are live until freed, each once; firing after the session is
    // destroyed is allowed.
    unsafe {
        riptide_hsession_clear_interrupt(s);
        assert_eq!(
            t.get_row(s, b"3", RIPTIDE_ROW_LOCK_EXCLUSIVE).0,
            riptide_status_t::RIPTIDE_OK
        );
        riptide_hsession_destroy(s);
        riptide_hsession_destroy(holder);
        riptide_hinterrupt_fire(intr);
        riptide_hinterrupt_destroy(intr);
    }
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
    assert_eq!(common::stat(t.db, "keys_written"), 800);
}
