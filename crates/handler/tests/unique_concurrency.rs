//! Two concurrent inserts of one unique value: exactly one succeeds, the other gets the
//! duplicate-key error naming the index (it waits for the first one's lock).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::*;
use riptide_handler::{Isolation, SessionOptions};

fn race(isolation: Isolation, rounds: u8) {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let engine = Arc::new(engine);
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    for round in 0..rounds {
        let barrier = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2u8)
            .map(|who| {
                let (engine, t, barrier) =
                    (Arc::clone(&engine), Arc::clone(&t), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let opts = SessionOptions {
                        isolation,
                        lock_timeout: Duration::from_secs(10),
                        ..SessionOptions::default()
                    };
                    let mut s = engine.begin_session(opts).unwrap();
                    // Take the snapshot before the race (repeatable read).
                    s.get_row(&t, b"none", riptide_handler::RowLock::None)
                        .unwrap();
                    barrier.wait();
                    let pk = [round, who];
                    let r = s.insert(&t, &pk, &[k(&[round])], b"row");
                    if r.is_ok() {
                        std::thread::sleep(Duration::from_millis(20));
                        s.commit().unwrap();
                    } else {
                        s.rollback().unwrap();
                    }
                    r.map_err(|e| e.duplicate_index())
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let ok = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(ok, 1, "round {round}: {results:?}");
        assert!(
            results.contains(&Err(Some(1))),
            "round {round}: {results:?}"
        );
    }
    assert_eq!(index_entries(&engine, &t, 1).len(), usize::from(rounds));
    drop(t);
    let engine = Arc::try_unwrap(engine).unwrap();
    close(db, engine);
}

#[test]
fn concurrent_inserts_of_one_unique_value_repeatable_read() {
    race(Isolation::RepeatableRead, 10);
}

#[test]
fn concurrent_inserts_of_one_unique_value_read_committed() {
    race(Isolation::ReadCommitted, 10);
}
