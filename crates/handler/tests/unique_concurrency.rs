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

/// What [`insert_while_other_holds`] saw.
struct Race {
    /// The insert's outcome (the index of a duplicate).
    result: Result<(), Option<usize>>,
    /// How long the insert took.
    waited: Duration,
    /// The unique index's entries (key, pk) afterwards.
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A table with one UNIQUE index and one committed row (`pk`, unique value `u`); a first
/// session runs `first` on it and stays open while a second session inserts another row
/// with `u` on its own thread; after 300 ms the first session commits (`commit_first`) or
/// rolls back.
fn insert_while_other_holds(
    isolation: Isolation,
    pk: &[u8],
    u: &[u8],
    first: impl FnOnce(&mut riptide_handler::Session, &Arc<riptide_handler::Table>),
    commit_first: bool,
) -> Race {
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
    s.insert(&t, pk, &[k(u)], b"row").unwrap();
    s.commit().unwrap();
    drop(s);

    let mut holder = engine.begin_session(opts).unwrap();
    first(&mut holder, &t);
    let (engine2, t2, u2) = (Arc::clone(&engine), Arc::clone(&t), u.to_vec());
    let inserter = std::thread::spawn(move || {
        let mut s = engine2.begin_session(opts).unwrap();
        let started = std::time::Instant::now();
        let r = s.insert(&t2, b"99", &[k(&u2)], b"other");
        let waited = started.elapsed();
        match &r {
            Ok(()) => s.commit().unwrap(),
            Err(_) => s.rollback().unwrap(),
        }
        (r.map_err(|e| e.duplicate_index()), waited)
    });
    std::thread::sleep(Duration::from_millis(300));
    if commit_first {
        holder.commit().unwrap();
    } else {
        holder.rollback().unwrap();
    }
    let (result, waited) = inserter.join().unwrap();
    let entries = index_entries(&engine, &t, 1);
    drop((holder, t));
    let engine = Arc::try_unwrap(engine).unwrap();
    close(db, engine);
    Race {
        result,
        waited,
        entries,
    }
}

/// A row another session is deleting still holds its unique value until that session
/// commits: an insert of the value waits for it (InnoDB waits on the delete-marked record's
/// lock), then succeeds after a commit and fails with the duplicate after a rollback.
#[test]
fn insert_of_a_value_being_deleted_waits_then_succeeds() {
    for isolation in [Isolation::RepeatableRead, Isolation::ReadCommitted] {
        let delete = |s: &mut riptide_handler::Session, t: &Arc<riptide_handler::Table>| {
            s.delete(t, b"1", &[k(b"5")]).unwrap();
        };
        let race = insert_while_other_holds(isolation, b"1", b"5", delete, true);
        assert!(
            race.waited >= Duration::from_millis(250),
            "{isolation:?}: {:?}",
            race.waited
        );
        assert_eq!(race.result, Ok(()), "{isolation:?}");
        assert_eq!(race.entries.len(), 1, "{isolation:?}");
    }
}

#[test]
fn insert_of_a_value_whose_delete_rolls_back_is_a_duplicate() {
    for isolation in [Isolation::RepeatableRead, Isolation::ReadCommitted] {
        let delete = |s: &mut riptide_handler::Session, t: &Arc<riptide_handler::Table>| {
            s.delete(t, b"1", &[k(b"5")]).unwrap();
        };
        let race = insert_while_other_holds(isolation, b"1", b"5", delete, false);
        assert!(
            race.waited >= Duration::from_millis(250),
            "{isolation:?}: {:?}",
            race.waited
        );
        assert_eq!(race.result, Err(Some(1)), "{isolation:?}");
    }
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
        None,
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
        let moved = |s: &mut riptide_handler::Session, t: &Arc<riptide_handler::Table>| {
            s.update(t, b"07", &[k(b"g")], b"17", &[k(b"g")], b"row", None)
                .unwrap();
        };
        let race = insert_while_other_holds(isolation, b"07", b"g", moved, true);
        assert_eq!(race.result, Err(Some(1)), "{isolation:?}");
        assert!(
            race.waited >= Duration::from_millis(250),
            "{isolation:?}: {:?}",
            race.waited
        );
        assert_eq!(race.entries, vec![(b"g".to_vec(), b"17".to_vec())]);
    }
}
