//! Two concurrent inserts of one unique value: exactly one succeeds, the other gets the
//! duplicate-key error naming the index (it waits for the first one's lock).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use riptide_handler::Isolation;

fn race(isolation: Isolation, rounds: u8) {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let engine = Arc::new(engine);
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    for round in 0..rounds {
        let results = race_two_sessions(&engine, &t, isolation, move |s, t, who| {
            let pk = [round, who];
            let r = s.insert(t, &pk, &[k(&[round])], b"row");
            if r.is_ok() {
                std::thread::sleep(Duration::from_millis(20));
                s.commit().unwrap();
            } else {
                s.rollback().unwrap();
            }
            r.map_err(|e| e.duplicate_index())
        });
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
