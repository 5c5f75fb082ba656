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

/// A row another session is deleting still holds its unique value until that session
/// commits: an insert of the value waits for it (InnoDB waits on the delete-marked record's
/// lock), then succeeds after a commit and fails with the duplicate after a rollback.
fn insert_while_other_deletes(commit_the_delete: bool, isolation: Isolation) {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let engine = Arc::new(engine);
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    let opts = riptide_handler::SessionOptions {
        isolation,
        lock_timeout: Duration::from_secs(10),
        ..riptide_handler::SessionOptions::default()
    };
    let mut s = engine.begin_session(opts).unwrap();
    s.insert(&t, b"1", &[k(b"5")], b"row 1").unwrap();
    s.commit().unwrap();

    let mut deleter = engine.begin_session(opts).unwrap();
    deleter.delete(&t, b"1", &[k(b"5")]).unwrap();
    let (engine2, t2) = (Arc::clone(&engine), Arc::clone(&t));
    let inserter = std::thread::spawn(move || {
        let mut s = engine2.begin_session(opts).unwrap();
        let started = std::time::Instant::now();
        let r = s.insert(&t2, b"3", &[k(b"5")], b"row 3");
        let waited = started.elapsed();
        match &r {
            Ok(()) => s.commit().unwrap(),
            Err(_) => s.rollback().unwrap(),
        }
        (r.map_err(|e| e.duplicate_index()), waited)
    });
    std::thread::sleep(Duration::from_millis(300));
    if commit_the_delete {
        deleter.commit().unwrap();
    } else {
        deleter.rollback().unwrap();
    }
    let (result, waited) = inserter.join().unwrap();
    assert!(
        waited >= Duration::from_millis(250),
        "the insert did not wait for the deleting session ({waited:?})"
    );
    if commit_the_delete {
        assert_eq!(result, Ok(()));
        assert_eq!(index_entries(&engine, &t, 1).len(), 1);
    } else {
        assert_eq!(result, Err(Some(1)));
    }
    drop((s, deleter, t));
    let engine = Arc::try_unwrap(engine).unwrap();
    close(db, engine);
}

#[test]
fn insert_of_a_value_being_deleted_waits_then_succeeds() {
    insert_while_other_deletes(true, Isolation::RepeatableRead);
    insert_while_other_deletes(true, Isolation::ReadCommitted);
}

#[test]
fn insert_of_a_value_whose_delete_rolls_back_is_a_duplicate() {
    insert_while_other_deletes(false, Isolation::RepeatableRead);
    insert_while_other_deletes(false, Isolation::ReadCommitted);
}

/// `wrote_index` tells whether the session changed entries of an index, and forgets what a
/// savepoint rollback undid.
#[test]
fn wrote_index_follows_the_sessions_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("b", false)],
            1,
        )
        .unwrap();
    let mut s = engine
        .begin_session(riptide_handler::SessionOptions::default())
        .unwrap();
    s.insert(&t, b"1", &[k(b"x"), k(b"y")], b"r").unwrap();
    s.commit().unwrap();
    drop(s);
    let mut s = engine
        .begin_session(riptide_handler::SessionOptions::default())
        .unwrap();
    assert!(!s.wrote_index(&t, 1) && !s.wrote_index(&t, 2));
    s.set_savepoint().unwrap();
    s.update(
        &t,
        b"1",
        &[k(b"x"), k(b"y")],
        b"1",
        &[k(b"x"), k(b"z")],
        b"r",
    )
    .unwrap();
    assert!(!s.wrote_index(&t, 1), "index a did not change");
    assert!(s.wrote_index(&t, 2));
    s.rollback_to_savepoint().unwrap();
    assert!(!s.wrote_index(&t, 2), "the savepoint rollback undid it");
    assert!(
        !s.wrote_index(&t, 0),
        "the primary key is not a secondary index"
    );
    s.rollback().unwrap();
    drop((s, t));
    close(db, engine);
}

/// A transaction that moves a row to a new primary key keeps the row's unique value: an
/// insert of the value by another transaction waits for it, then finds the moved row
/// (before, it found the value's old entry gone and inserted a second row with it).
#[test]
fn a_row_moved_to_a_new_primary_key_keeps_its_unique_value() {
    for isolation in [Isolation::ReadCommitted, Isolation::RepeatableRead] {
        let dir = tempfile::tempdir().unwrap();
        let (db, engine) = open(dir.path());
        let engine = Arc::new(engine);
        let t = engine
            .create_table(b"t", &[primary(), secondary("u", true)], 1)
            .unwrap();
        let opts = riptide_handler::SessionOptions {
            isolation,
            lock_timeout: Duration::from_secs(10),
            ..riptide_handler::SessionOptions::default()
        };
        let mut s = engine.begin_session(opts).unwrap();
        s.insert(&t, b"07", &[k(b"g")], b"row").unwrap();
        s.commit().unwrap();
        drop(s);

        let mut mover = engine.begin_session(opts).unwrap();
        mover
            .update(&t, b"07", &[k(b"g")], b"17", &[k(b"g")], b"row")
            .unwrap();
        let (engine2, t2) = (Arc::clone(&engine), Arc::clone(&t));
        let inserter = std::thread::spawn(move || {
            let mut s = engine2.begin_session(opts).unwrap();
            let started = std::time::Instant::now();
            let r = s.insert(&t2, b"20", &[k(b"g")], b"other");
            let waited = started.elapsed();
            s.rollback().unwrap();
            (r.map_err(|e| e.duplicate_index()), waited)
        });
        std::thread::sleep(Duration::from_millis(300));
        mover.commit().unwrap();
        let (result, waited) = inserter.join().unwrap();
        assert_eq!(result, Err(Some(1)), "{isolation:?}");
        assert!(
            waited >= Duration::from_millis(250),
            "{isolation:?}: {waited:?}"
        );
        assert_eq!(
            index_entries(&engine, &t, 1),
            vec![(b"g".to_vec(), b"17".to_vec())]
        );
        drop((mover, t));
        let engine = Arc::try_unwrap(engine).unwrap();
        close(db, engine);
    }
}
